/**
 * MXFP4 (OCP microscaling FP4): blocks of 32 E2M1 values under a shared power-of-two scale (ggml `block_mxfp4`,
 * 17 bytes: u8 e (E8M0); u8 qs[16]). Byte j holds element j (low nibble) and j+16 (high); the nibble indexes the
 * doubled E2M1 values `kvalues_mxfp4`, so value = kvalues[q] · 2^(e − 128) (ggml `GGML_E8M0_TO_FP32_HALF`, with its
 * subnormal patterns for e < 2). Reference quantizer: ggml's `quantize_row_mxfp4_ref`.
 */

import { GgmlType } from '../gguf/types.js';
import type { QuantType } from './quant-type.js';
import { checkDequantizeArgs, checkQuantizeArgs } from './row-args.js';

const fround = Math.fround;
const QK = 32;
const BLOCK_BYTES = 17;
/** ggml `kvalues_mxfp4` (E2M1 values doubled). */
const KVALUES_MXFP4: Int8Array = Int8Array.from([0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12]);

const scaleF32 = new Float32Array(1);
const scaleU32 = new Uint32Array(scaleF32.buffer);

/** ggml `ggml_e8m0_to_fp32_half`: 2^(e − 128) as an f32 (subnormal 2^−128 and 2^−127 for e = 0, 1). */
function e8m0Half(e: number): number {
  scaleU32[0] = e < 2 ? 0x00200000 << e : (e - 1) << 23;
  return scaleF32[0]!;
}

/** ggml `best_index_mxfp4`: the first level nearest x at scale d (strictly smaller error wins). */
function bestIndex(x: number, d: number): number {
  let best = 0;
  let bestErr = Math.abs(fround(fround(KVALUES_MXFP4[0]! * d) - x));
  for (let i = 1; i < 16; i++) {
    const err = Math.abs(fround(fround(KVALUES_MXFP4[i]! * d) - x));
    if (err < bestErr) {
      best = i;
      bestErr = err;
    }
  }
  return best;
}

/** The MXFP4 type. */
export const mxfp4: QuantType = {
  id: GgmlType.MXFP4,
  name: 'MXFP4',
  blockElements: QK,
  blockBytes: BLOCK_BYTES,
  f16Scales: [],
  wasm: { kernel: 'gemv_mxfp4', activations: 'q8', rowPairs: true },
  webgpu: { snippet: 'mxfp4', headToTail: 1, groupBlocks: 0, fastDot32: false },
  dequantizeRow(src: Uint8Array, dst: Float32Array, nElements: number): void {
    const nb = checkDequantizeArgs(this, src, dst, nElements);
    for (let i = 0; i < nb; i++) {
      const o = i * BLOCK_BYTES;
      const d = e8m0Half(src[o]!);
      const y = i * QK;
      for (let j = 0; j < 16; j++) {
        const b = src[o + 1 + j]!;
        dst[y + j] = KVALUES_MXFP4[b & 0x0f]! * d;
        dst[y + j + 16] = KVALUES_MXFP4[b >> 4]! * d;
      }
    }
  },
  quantizeRow(src: Float32Array, dst: Uint8Array): void {
    const nb = checkQuantizeArgs(this, src, dst);
    for (let i = 0; i < nb; i++) {
      const x = i * QK;
      let amax = 0;
      for (let j = 0; j < QK; j++) if (amax < Math.abs(src[x + j]!)) amax = Math.abs(src[x + j]!);
      // (uint8_t)(floorf(log2f(amax)) − 2 + 127): log2f rounded to f32 before the floor; C's conversion wraps mod 256.
      const e = amax > 0 ? (Math.floor(fround(Math.log2(amax))) - 2 + 127) & 0xff : 0;
      const d = e8m0Half(e);
      const o = i * BLOCK_BYTES;
      dst[o] = e;
      for (let j = 0; j < 16; j++) dst[o + 1 + j] = bestIndex(src[x + j]!, d) | (bestIndex(src[x + 16 + j]!, d) << 4);
    }
  },
};
