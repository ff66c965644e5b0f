/**
 * Q5_0: blocks of 32 5-bit quants with one f16 scale (ggml `block_q5_0`, 22 bytes: f16 d; u8 qh[4]; u8 qs[16]).
 * Low 4 bits as Q4_0's nibbles, bit 4 of element j is bit j of the little-endian u32 qh; value = (q − 16)·d.
 * Reference quantizer: ggml's `quantize_row_q5_0_ref` (d = max/−16).
 */

import { GgmlType } from '../gguf/types.js';
import { readF16, writeF16 } from './half.js';
import type { QuantType } from './quant-type.js';
import { signedAbsMax, truncToInt8 } from './rounding.js';
import { checkDequantizeArgs, checkQuantizeArgs } from './row-args.js';

const fround = Math.fround;
const QK = 32;
const BLOCK_BYTES = 22;

/** The Q5_0 type. */
export const q5_0: QuantType = {
  id: GgmlType.Q5_0,
  name: 'Q5_0',
  blockElements: QK,
  blockBytes: BLOCK_BYTES,
  f16Scales: [0],
  wasm: {
    kernel: 'gemv_q5_0',
    activations: 'q8',
    rowPairs: true,
    rows4: { kernel: 'gemv_q5_0_r4', head: 1, tail: 0, recode: 'q5_0' },
  },
  webgpu: { snippet: 'q5_0', headToTail: 2, groupBlocks: 0, fastDot32: false, hardwareRows: true, chunkDot: true },
  dequantizeRow(src: Uint8Array, dst: Float32Array, nElements: number): void {
    const nb = checkDequantizeArgs(this, src, dst, nElements);
    for (let i = 0; i < nb; i++) {
      const o = i * BLOCK_BYTES;
      const d = readF16(src, o);
      const qh = src[o + 2]! | (src[o + 3]! << 8) | (src[o + 4]! << 16) | (src[o + 5]! << 24);
      const y = i * QK;
      for (let j = 0; j < 16; j++) {
        const b = src[o + 6 + j]!;
        const h0 = ((qh >>> j) << 4) & 0x10;
        const h1 = (qh >>> (j + 12)) & 0x10;
        dst[y + j] = (((b & 0x0f) | h0) - 16) * d;
        dst[y + j + 16] = (((b >> 4) | h1) - 16) * d;
      }
    }
  },
  quantizeRow(src: Float32Array, dst: Uint8Array): void {
    const nb = checkQuantizeArgs(this, src, dst);
    for (let i = 0; i < nb; i++) {
      const x = i * QK;
      const o = i * BLOCK_BYTES;
      const max = signedAbsMax(src, x, QK);
      const d = fround(max / -16);
      const id = d !== 0 ? fround(1 / d) : 0;
      writeF16(dst, o, d);
      let qh = 0;
      for (let j = 0; j < 16; j++) {
        const q0 = Math.min(31, truncToInt8(fround(fround(src[x + j]! * id) + 16.5))) & 0xff;
        const q1 = Math.min(31, truncToInt8(fround(fround(src[x + 16 + j]! * id) + 16.5))) & 0xff;
        dst[o + 6 + j] = (q0 & 0x0f) | ((q1 & 0x0f) << 4);
        qh |= ((q0 & 0x10) >>> 4) << j;
        qh |= ((q1 & 0x10) >>> 4) << (j + 16);
      }
      dst[o + 2] = qh & 0xff;
      dst[o + 3] = (qh >>> 8) & 0xff;
      dst[o + 4] = (qh >>> 16) & 0xff;
      dst[o + 5] = (qh >>> 24) & 0xff;
    }
  },
};
