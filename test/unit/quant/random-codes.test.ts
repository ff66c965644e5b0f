/**
 * The fixture generator's random-code tensors for the read-only IQ types (scripts/synthetic/random-codes.ts): which
 * types take them, and that their calibrated f16 scale gives the planned standard deviation, finite everywhere.
 */

import { beforeAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../../scripts/deterministic-random.mjs';
import { hasRandomCodes, randomCodeBytes } from '../../../scripts/synthetic/random-codes.js';
import { GgmlType } from '../../../src/gguf/types.js';
import { DEQUANTIZE_ONLY, getQuantType } from '../../../src/quant/index.js';
import { loadIqGrids } from '../../../src/quant/iq-grids.js';

describe('random-code tensors', () => {
  beforeAll(async () => {
    await loadIqGrids();
  });

  it('cover exactly the types without a quantizer', () => {
    for (const t of DEQUANTIZE_ONLY) expect(hasRandomCodes(t), GgmlType[t]).toBe(true);
    for (const t of [GgmlType.Q4_K, GgmlType.Q8_0, GgmlType.MXFP4, GgmlType.IQ4_XS])
      expect(hasRandomCodes(t)).toBe(false);
  });

  for (const t of DEQUANTIZE_ONLY) {
    it(`${GgmlType[t]}: values of the planned standard deviation`, () => {
      const n = 8 * 256;
      const bytes = randomCodeBytes(t, n, 0.05, mulberry32(3));
      const values = new Float32Array(n); // [n]
      getQuantType(t).dequantizeRow(bytes, values, n);
      let sum = 0;
      for (const v of values) {
        expect(Number.isFinite(v)).toBe(true);
        sum += v * v;
      }
      expect(Math.sqrt(sum / n)).toBeCloseTo(0.05, 2); // up to the f16 rounding of the scale
    });
  }
});
