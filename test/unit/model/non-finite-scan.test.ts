/**
 * `firstNonFinite` (issue #21 item 6): NaN/Inf weights are found at load by exponent bits — float elements and the
 * f16 scales of quantized blocks — and finite data (including the real quantized fixtures) passes.
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseGguf } from '../../../src/gguf/parse.js';
import { GgmlType, GGML_TYPES } from '../../../src/gguf/types.js';
import { MemoryByteSource } from '../../../src/io/byte-source.js';
import { firstNonFinite } from '../../../src/model/non-finite-scan.js';
import { listGgufFiles } from '../../helpers/shared-path.js';

describe('firstNonFinite', () => {
  it('finds NaN and ±Inf in F32, F16 and BF16 data (any alignment)', () => {
    const f32 = new Float32Array([0, 1, -2, 3e38, NaN, 5]);
    expect(firstNonFinite(GgmlType.F32, new Uint8Array(f32.buffer))).toBe(4);
    const unaligned = new Uint8Array(f32.byteLength + 1);
    unaligned.set(new Uint8Array(f32.buffer), 1);
    expect(firstNonFinite(GgmlType.F32, unaligned.subarray(1))).toBe(4);
    expect(firstNonFinite(GgmlType.F32, new Uint8Array(new Float32Array([1, 2]).buffer))).toBe(-1);
    expect(firstNonFinite(GgmlType.F16, new Uint8Array(new Uint16Array([0x3c00, 0x7c00]).buffer))).toBe(1); // 1, +Inf
    expect(firstNonFinite(GgmlType.F16, new Uint8Array(new Uint16Array([0x7bff, 0xfe00]).buffer))).toBe(1); // max, NaN
    expect(firstNonFinite(GgmlType.BF16, new Uint8Array(new Uint16Array([0x3f80, 0xff80]).buffer))).toBe(1); // 1, -Inf
  });

  it('finds a non-finite scale in each block-quantized layout', () => {
    const cases: [GgmlType, number][] = [
      [GgmlType.Q4_0, 0],
      [GgmlType.Q4_1, 2],
      [GgmlType.Q5_0, 0],
      [GgmlType.Q5_1, 2],
      [GgmlType.Q8_0, 0],
      [GgmlType.Q2_K, 82],
      [GgmlType.Q3_K, 108],
      [GgmlType.Q4_K, 2],
      [GgmlType.Q5_K, 0],
      [GgmlType.Q6_K, 208],
      [GgmlType.IQ4_NL, 0],
      [GgmlType.IQ4_XS, 0],
    ];
    for (const [type, at] of cases) {
      const info = GGML_TYPES.get(type)!;
      const bytes = new Uint8Array(3 * info.blockBytes); // three blocks of zeros: finite
      expect(firstNonFinite(type, bytes), info.name).toBe(-1);
      bytes[2 * info.blockBytes + at + 1] = 0x7e; // NaN f16 scale in block 2
      expect(firstNonFinite(type, bytes), info.name).toBe(2 * info.blockElements);
    }
  });

  it('passes every tensor of the shared model fixtures', async () => {
    for (const path of listGgufFiles('models')) {
      const bytes = new Uint8Array(readFileSync(path));
      const file = await parseGguf(new MemoryByteSource(bytes));
      for (const t of file.tensors) {
        const data = bytes.subarray(file.tensorDataOffset + t.offset, file.tensorDataOffset + t.offset + t.byteLength);
        expect(firstNonFinite(t.type, data), `${path} ${t.name}`).toBe(-1);
      }
    }
  });
});
