/**
 * Q4_1: blocks of 32 4-bit quants with an f16 scale and an f16 minimum (ggml `block_q4_1`, 20 bytes:
 * f16 d, m; u8 qs[16]). Byte j holds element j (low nibble) and j+16 (high); value = q·d + m in f32.
 * Reference quantizer: ggml's `quantize_row_q4_1_ref` (d = (max − min)/15).
 */

import { GgmlType } from '../gguf/types.js';
import { readF16, writeF16 } from './half.js';
import type { QuantType } from './quant-type.js';
import { truncToInt8 } from './rounding.js';
import { checkDequantizeArgs, checkQuantizeArgs } from './row-args.js';

const fround = Math.fround;
const QK = 32;
const BLOCK_BYTES = 20;

/** The Q4_1 type. */
export const q4_1: QuantType = {
  id: GgmlType.Q4_1,
  name: 'Q4_1',
  blockElements: QK,
  blockBytes: BLOCK_BYTES,
  f16Scales: [0, 2],
  wasm: { kernel: 'gemv_q4_1', activations: 'q8' },
  webgpu: { snippet: 'q4_1', headToTail: 0, groupBlocks: 0, fastDot32: false },
  dequantizeRow(src: Uint8Array, dst: Float32Array, nElements: number): void {
    const nb = checkDequantizeArgs(this, src, dst, nElements);
    for (let i = 0; i < nb; i++) {
      const o = i * BLOCK_BYTES;
      const d = readF16(src, o);
      const m = readF16(src, o + 2);
      const y = i * QK;
      for (let j = 0; j < 16; j++) {
        const b = src[o + 4 + j]!;
        dst[y + j] = fround((b & 0x0f) * d) + m;
        dst[y + j + 16] = fround((b >> 4) * d) + m;
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
      const d = fround(fround(max - min) / 15);
      const id = d !== 0 ? fround(1 / d) : 0;
      writeF16(dst, o, d);
      writeF16(dst, o + 2, min);
      for (let j = 0; j < 16; j++) {
        const x0 = fround(fround(src[x + j]! - min) * id);
        const x1 = fround(fround(src[x + 16 + j]! - min) * id);
        const q0 = Math.min(15, truncToInt8(fround(x0 + 0.5)));
        const q1 = Math.min(15, truncToInt8(fround(x1 + 0.5)));
        dst[o + 4 + j] = (q0 & 0xff) | ((q1 << 4) & 0xff);
      }
    }
  },
};
