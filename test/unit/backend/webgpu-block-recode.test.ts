/**
 * The software kernel set's re-coded K-quant blocks (block-recode.ts), no GPU needed: the upload's words decoded as
 * the snippets document them — Q6_K (shaders/quant/q6_k_i8.wgsl: int8 q − 32 at byte e, int8 scale at byte
 * 256 + e/16, f16 d at byte 272), Q5_K (q5_k_i8.wgsl: q at byte e, scale at 256 + e/32, min at 264 + e/32, f16 d and
 * dmin at 272), zero padding to 72 words — give exactly the registry's dequantized values; the hardware set keeps the
 * plain block; the row stride stays a multiple of four words (the dot32's vec4 loads).
 */

import { describe, expect, it } from 'vitest';
import { getGpuQuantLayout, repackRows, rowWords } from '../../../src/backend/webgpu/upload.js';
import { GgmlType } from '../../../src/gguf/types.js';
import { readF16 } from '../../../src/quant/half.js';
import { getQuantType } from '../../../src/quant/index.js';
import { makeWeight } from '../../helpers/gpu.js';

const fround = Math.fround;

describe('Q6_K re-coded for the software kernels (q6_k_i8)', () => {
  const sw = getGpuQuantLayout(GgmlType.Q6_K, 'w', 'software');
  const hw = getGpuQuantLayout(GgmlType.Q6_K, 'w', 'hardware');

  it('software and hardware layouts differ only where the registry says', () => {
    expect([sw.name, sw.recode?.words, rowWords(sw, 768)]).toEqual(['q6_k_i8', 72, 216]);
    expect([hw.name, hw.recode, rowWords(hw, 768)]).toEqual(['q6_k', null, 3 * 53]);
  });

  it('decodes to the dequantized values exactly, padding zero', () => {
    const k = 768;
    const nRows = 5;
    const { bytes, values } = makeWeight(GgmlType.Q6_K, k, nRows, 11);
    // extreme blocks too: every quant 0 and every quant 63 (q − 32 = −32 and 31), scales ±127
    const qt = getQuantType(GgmlType.Q6_K);
    const words = repackRows(sw, bytes, k, { rowStart: 1, nRows: 3 }); // rows 1 … 3 only
    expect(words.byteLength).toBe(3 * rowWords(sw, k) * 4);
    const dv = new DataView(words.buffer, words.byteOffset, words.byteLength);
    for (let r = 0; r < 3; r++) {
      for (let b = 0; b < k / 256; b++) {
        const o = (r * rowWords(sw, k) + b * 72) * 4;
        const d = readF16(words, o + 272);
        for (let e = 0; e < 256; e++) {
          const got = fround(fround(d * dv.getInt8(o + 256 + (e >> 4))) * dv.getInt8(o + e));
          expect(got, `row ${r + 1} block ${b} element ${e}`).toBe(values[(r + 1) * k + 256 * b + e]);
        }
        for (let j = 274; j < 288; j++) expect(words[o + j], `padding byte ${j}`).toBe(0);
      }
    }
    const extreme = new Uint8Array(2 * qt.blockBytes);
    extreme.fill(0, 0, 192); // block 0: q = 0 everywhere
    extreme.fill(0xff, qt.blockBytes, qt.blockBytes + 192); // block 1: q = 63 everywhere
    extreme.fill(0x81, 192, 208); // scales −127
    extreme.fill(0x7f, qt.blockBytes + 192, qt.blockBytes + 208); // scales 127
    extreme[209] = 0x3c; // d = 1
    extreme[qt.blockBytes + 209] = 0x3c;
    const out = repackRows(sw, extreme, 512, { rowStart: 0, nRows: 1 });
    const ref = new Float32Array(512);
    qt.dequantizeRow(extreme, ref, 512);
    expect([ref[0], ref[511]]).toEqual([127 * 32, 127 * 31]);
    const xdv = new DataView(out.buffer, out.byteOffset, out.byteLength);
    for (let e = 0; e < 512; e++) {
      const o = (e >> 8) * 288;
      const v = readF16(out, o + 272) * xdv.getInt8(o + 256 + ((e & 255) >> 4)) * xdv.getInt8(o + (e & 255));
      expect(v, `element ${e}`).toBe(ref[e]);
    }
  });
});

describe('Q5_K re-coded for the software kernels (q5_k_i8)', () => {
  const sw = getGpuQuantLayout(GgmlType.Q5_K, 'w', 'software');
  const hw = getGpuQuantLayout(GgmlType.Q5_K, 'w', 'hardware');

  it('software and hardware layouts differ only where the registry says', () => {
    expect([sw.name, sw.recode?.words, rowWords(sw, 512)]).toEqual(['q5_k_i8', 72, 144]);
    expect([hw.name, hw.recode, rowWords(hw, 512)]).toEqual(['q5_k', null, 2 * 44]);
  });

  it('decodes to the dequantized values exactly, padding zero', () => {
    const k = 768;
    const { bytes, values } = makeWeight(GgmlType.Q5_K, k, 4, 12);
    const words = repackRows(sw, bytes, k, { rowStart: 2, nRows: 2 }); // rows 2 and 3 only
    expect(words.byteLength).toBe(2 * rowWords(sw, k) * 4);
    for (let r = 0; r < 2; r++) {
      for (let b = 0; b < k / 256; b++) {
        const o = (r * rowWords(sw, k) + b * 72) * 4;
        const d = readF16(words, o + 272);
        const dmin = readF16(words, o + 274);
        for (let e = 0; e < 256; e++) {
          expect(words[o + e]!, 'a 5-bit quant').toBeLessThan(32);
          const got =
            fround(fround(d * words[o + 256 + (e >> 5)]!) * words[o + e]!) - fround(dmin * words[o + 264 + (e >> 5)]!);
          expect(fround(got), `row ${r + 2} block ${b} element ${e}`).toBe(values[(r + 2) * k + 256 * b + e]);
        }
        for (let j = 276; j < 288; j++) expect(words[o + j], `padding byte ${j}`).toBe(0);
      }
    }
  });
});
