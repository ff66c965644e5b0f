/**
 * Q5_1: blocks of 32 5-bit quants with an f16 scale and minimum (ggml `block_q5_1`, 24 bytes: f16 d, m; u8 qh[4];
 * u8 qs[16]). Bits as Q5_0; value = q·d + m in f32. Reference quantizer: ggml's `quantize_row_q5_1_ref`
 * (d = (max − min)/31).
 */

import { GgmlType } from '../gguf/types.js';
import { readF16, writeF16 } from './half.js';
import type { QuantType } from './quant-type.js';
import { truncToUint8 } from './rounding.js';
import { checkDequantizeArgs, checkQuantizeArgs } from './row-args.js';

const fround = Math.fround;
const QK = 32;
const BLOCK_BYTES = 24;

/** The Q5_1 type. */
export const q5_1: QuantType = {
  id: GgmlType.Q5_1,
  name: 'Q5_1',
  blockElements: QK,
  blockBytes: BLOCK_BYTES,
  f16Scales: [0, 2],
  wasm: { kernel: 'gemv_q5_1', activations: 'q8' },
  webgpu: { snippet: 'q5_1', headToTail: 0, groupBlocks: 0, fastDot32: false },
  dequantizeRow(src: Uint8Array, dst: Float32Array, nElements: number): void {
    const nb = checkDequantizeArgs(this, src, dst, nElements);
    for (let i = 0; i < nb; i++) {
      const o = i * BLOCK_BYTES;
      const d = readF16(src, o);
      const m = readF16(src, o + 2);
      const qh = src[o + 4]! | (src[o + 5]! << 8) | (src[o + 6]! << 16) | (src[o + 7]! << 24);
      const y = i * QK;
      for (let j = 0; j < 16; j++) {
        const b = src[o + 8 + j]!;
        const h0 = ((qh >>> j) << 4) & 0x10;
        const h1 = (qh >>> (j + 12)) & 0x10;
        dst[y + j] = fround(((b & 0x0f) | h0) * d) + m;
        dst[y + j + 16] = fround(((b >> 4) | h1) * d) + m;
      }
    }
  },
  quantizeRow(src: Float32Array, dst: Uint8Array): void {
    const nb = checkQuantizeArgs(this, src, dst);
    for (let i = 0; i < nb; i++) {
      const x = i * QK;
      const o = i * BLOCK_BYTES;
      let min = 3.4028234663852886e38;
      let max = -3.4028234663852886e38;
      for (let j = 0; j < QK; j++) {
        const v = src[x + j]!;
        if (v < min) min = v;
        if (v > max) max = v;
      }
      const d = fround(fround(max - min) / 31);
      const id = d !== 0 ? fround(1 / d) : 0;
      writeF16(dst, o, d);
      writeF16(dst, o + 2, min);
      let qh = 0;
      for (let j = 0; j < 16; j++) {
        const q0 = truncToUint8(fround(fround(fround(src[x + j]! - min) * id) + 0.5));
        const q1 = truncToUint8(fround(fround(fround(src[x + 16 + j]! - min) * id) + 0.5));
        dst[o + 8 + j] = (q0 & 0x0f) | ((q1 & 0x0f) << 4);
        qh |= ((q0 & 0x10) >>> 4) << j;
        qh |= ((q1 & 0x10) >>> 4) << (j + 16);
      }
      dst[o + 4] = qh & 0xff;
      dst[o + 5] = (qh >>> 8) & 0xff;
      dst[o + 6] = (qh >>> 16) & 0xff;
      dst[o + 7] = (qh >>> 24) & 0xff;
    }
  },
};
