/**
 * Reference quantizers: byte-exact with ggml's quantize_row_*_ref on the golden inputs (all-zero, constant, one-sided,
 * outlier and tie-heavy blocks among them), and round-trip error within each type's expected bound on random data.
 */

import { describe, expect, it } from 'vitest';
import { DEQUANTIZE_ONLY, QUANT_TYPES } from '../../../src/quant/index.js';
import { loadVectors } from './quant-vectors.js';
import { mulberry32 } from '../../helpers/mulberry32.js';

function firstByteDiff(a: Uint8Array, b: Uint8Array, blockBytes: number): string | null {
  if (a.length !== b.length) return `length ${a.length} vs ${b.length}`;
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i])
      return `byte ${i} (block ${Math.floor(i / blockBytes)}, +${i % blockBytes}): got ${a[i]} want ${b[i]}`;
  }
  return null;
}

const QUANTIZABLE = QUANT_TYPES.filter((t) => !DEQUANTIZE_ONLY.has(t.id));

describe('quantizeRow is byte-exact with ggml quantize_row_*_ref (golden vectors)', () => {
  for (const t of QUANTIZABLE) {
    it(t.name, () => {
      const v = loadVectors(t.name);
      expect(v.quantize).not.toBeNull();
      const q = v.quantize!;
      const out = new Uint8Array(q.expectedBlocks.length);
      t.quantizeRow!(q.input, out);
      expect(firstByteDiff(out, q.expectedBlocks, t.blockBytes)).toBeNull();
    });
  }

  it('dequantize-only types have no quantizer and no quantize vectors', () => {
    for (const t of QUANT_TYPES.filter((q) => DEQUANTIZE_ONLY.has(q.id))) {
      expect(t.quantizeRow, t.name).toBeUndefined();
      expect(loadVectors(t.name).quantize, t.name).toBeNull();
    }
  });
});

/** Deterministic Gaussian samples (mulberry32 + Box–Muller). */
function gaussian(n: number, seed: number): Float32Array {
  const r = mulberry32(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.sqrt(-2 * Math.log(r() + 1e-12)) * Math.cos(2 * Math.PI * r());
  return out;
}

// Normalised RMS error bounds of a Gaussian round trip (measured values are ≈ 60–80 % of these).
const NRMSE_BOUND: Record<string, number> = {
  F32: 0,
  F16: 5e-4,
  BF16: 4e-3,
  Q8_0: 0.01,
  Q6_K: 0.03,
  Q5_0: 0.05,
  Q5_1: 0.05,
  Q5_K: 0.05,
  Q4_0: 0.1,
  Q4_1: 0.1,
  Q4_K: 0.1,
  IQ4_NL: 0.1,
  IQ4_XS: 0.1,
  MXFP4: 0.15,
  Q3_K: 0.2,
  Q2_K: 0.4,
};

describe('round trip quantize → dequantize', () => {
  for (const t of QUANTIZABLE) {
    it(`${t.name} stays within its error bound`, () => {
      const n = 4096;
      const x = gaussian(n, 7 + t.id);
      const bytes = new Uint8Array((n / t.blockElements) * t.blockBytes);
      t.quantizeRow!(x, bytes);
      const y = new Float32Array(n);
      t.dequantizeRow(bytes, y, n);
      let err = 0;
      let ref = 0;
      for (let i = 0; i < n; i++) {
        err += (x[i]! - y[i]!) ** 2;
        ref += x[i]! ** 2;
      }
      const nrmse = Math.sqrt(err / ref);
      expect(nrmse).toBeLessThanOrEqual(NRMSE_BOUND[t.name]!);
    });
  }

  it('quantizing all zeros gives zeros back for every type', () => {
    for (const t of QUANTIZABLE) {
      const x = new Float32Array(t.blockElements * 2);
      const bytes = new Uint8Array(2 * t.blockBytes);
      t.quantizeRow!(x, bytes);
      const y = new Float32Array(x.length).fill(1);
      t.dequantizeRow(bytes, y, x.length);
      expect(y.every((v) => v === 0)).toBe(true);
    }
  });
});
