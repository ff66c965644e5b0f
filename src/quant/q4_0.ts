/**
 * Q4_0: blocks of 32 4-bit quants with one f16 scale (ggml `block_q4_0`, 18 bytes: f16 d; u8 qs[16]).
 * Byte j holds element j (low nibble) and j+16 (high nibble); value = (q − 8)·d. Reference quantizer: ggml's
 * `quantize_row_q4_0_ref` (d = max/−8 where max is the signed value of largest magnitude).
 */

import { GgmlType } from '../gguf/types.js';
import { readF16, writeF16 } from './half.js';
import type { QuantType } from './quant-type.js';
import { signedAbsMax, truncToInt8 } from './rounding.js';
import { checkDequantizeArgs, checkQuantizeArgs } from './row-args.js';

const fround = Math.fround;
const QK = 32;
const BLOCK_BYTES = 18;

/** The Q4_0 type. */
export const q4_0: QuantType = {
  id: GgmlType.Q4_0,
  name: 'Q4_0',
  blockElements: QK,
  blockBytes: BLOCK_BYTES,
  f16Scales: [0],
  wasm: { kernel: 'gemv_q4_0', activations: 'q8', rowPairs: true, rows4: { kernel: 'gemv_q4_0_r4', head: 1, tail: 0 } },
  webgpu: { snippet: 'q4_0', headToTail: 2, groupBlocks: 4, fastDot32: true, hardwareRows: true, chunkDot: true },
  dequantizeRow(src: Uint8Array, dst: Float32Array, nElements: number): void {
    const nb = checkDequantizeArgs(this, src, dst, nElements);
    for (let i = 0; i < nb; i++) {
      const o = i * BLOCK_BYTES;
      const d = readF16(src, o);
      const y = i * QK;
      for (let j = 0; j < 16; j++) {
        const b = src[o + 2 + j]!;
        dst[y + j] = ((b & 0x0f) - 8) * d;
        dst[y + j + 16] = ((b >> 4) - 8) * d;
      }
    }
  },
  quantizeRow(src: Float32Array, dst: Uint8Array): void {
    const nb = checkQuantizeArgs(this, src, dst);
    for (let i = 0; i < nb; i++) {
      const x = i * QK;
      const o = i * BLOCK_BYTES;
      const max = signedAbsMax(src, x, QK);
      const d = fround(max / -8);
      const id = d !== 0 ? fround(1 / d) : 0;
      writeF16(dst, o, d);
      for (let j = 0; j < 16; j++) {
        const x0 = fround(src[x + j]! * id);
        const x1 = fround(src[x + 16 + j]! * id);
        const q0 = Math.min(15, truncToInt8(fround(x0 + 8.5)));
        const q1 = Math.min(15, truncToInt8(fround(x1 + 8.5)));
        dst[o + 2 + j] = (q0 & 0xff) | ((q1 << 4) & 0xff);
      }
    }
  },
};
