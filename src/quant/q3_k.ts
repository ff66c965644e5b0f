/**
 * Q3_K: super-blocks of 256 3-bit quants in 16 sub-blocks of 16 with 6-bit signed scales under an f16 scale (ggml
 * `block_q3_K`, 110 bytes: u8 hmask[32]; u8 qs[64]; u8 scales[12]; f16 d). Low 2 bits in qs (4 per byte, strided by
 * 32), the high bit in hmask (bit k of hmask[l] for the k-th group of 32); value = (d·(sc − 32))·(q − 4·!hbit).
 * Reference quantizer: ggml's `quantize_row_q3_K_ref`.
 */

import { GgmlType } from '../gguf/types.js';
import { readF16, writeF16 } from './half.js';
import { makeQ3Quants } from './k-quant-scales.js';
import type { QuantType } from './quant-type.js';
import { nearestInt, toInt8 } from './rounding.js';
import { checkDequantizeArgs, checkQuantizeArgs } from './row-args.js';

const fround = Math.fround;
const QK_K = 256;
const BLOCK_BYTES = 110;

/** The 6-bit scale (0..63, before the −32) of sub-block `is` from the 12 scale bytes at `q[o ..]`. */
function q3kScale(q: Uint8Array, o: number, is: number): number {
  const low = is < 8 ? q[o + is]! & 0xf : q[o + is - 8]! >> 4;
  const high = (q[o + 8 + (is % 4)]! >> (2 * (is >> 2))) & 3;
  return low | (high << 4);
}

/** The Q3_K type. */
export const q3_k: QuantType = {
  id: GgmlType.Q3_K,
  name: 'Q3_K',
  blockElements: QK_K,
  blockBytes: BLOCK_BYTES,
  f16Scales: [108],
  wasm: 'dequantize',
  webgpu: { snippet: 'q3_k', headToTail: 0, groupBlocks: 0, fastDot32: false },
  dequantizeRow(src: Uint8Array, dst: Float32Array, nElements: number): void {
    const nb = checkDequantizeArgs(this, src, dst, nElements);
    const ds = new Float32Array(16); // per-sub-block f32 scales
    for (let i = 0; i < nb; i++) {
      const o = i * BLOCK_BYTES;
      const dAll = readF16(src, o + 108);
      for (let k = 0; k < 16; k++) ds[k] = dAll * (q3kScale(src, o + 96, k) - 32); // f32 d·(sc − 32)
      let y = i * QK_K;
      let m = 1;
      let is = 0;
      for (let n = 0; n < 2; n++) {
        const q = o + 32 + 32 * n;
        for (let shift = 0; shift < 8; shift += 2) {
          for (let half = 0; half < 32; half += 16) {
            const dl = ds[is++]!;
            for (let l = half; l < half + 16; l++) {
              dst[y++] = dl * (((src[q + l]! >> shift) & 3) - (src[o + l]! & m ? 0 : 4));
            }
          }
          m <<= 1;
        }
      }
    }
  },
  quantizeRow(src: Float32Array, dst: Uint8Array): void {
    const nb = checkQuantizeArgs(this, src, dst);
    const L = new Int8Array(QK_K); // (256) quants 0..7
    const scales = new Float32Array(16);
    for (let i = 0; i < nb; i++) {
      const x = i * QK_K;
      const o = i * BLOCK_BYTES;
      let maxScale = 0;
      let amax = 0;
      for (let j = 0; j < 16; j++) {
        scales[j] = makeQ3Quants(16, 4, src, x + 16 * j, L, 16 * j);
        const scale = Math.abs(scales[j]!);
        if (scale > amax) {
          amax = scale;
          maxScale = scales[j]!;
        }
      }
      const s = o + 96;
      dst.fill(0, s, s + 12);
      if (maxScale !== 0) {
        const iscale = fround(-32 / maxScale);
        for (let j = 0; j < 16; j++) {
          let l = toInt8(nearestInt(fround(iscale * scales[j]!)));
          l = Math.max(-32, Math.min(31, l)) + 32;
          if (j < 8) dst[s + j] = l & 0xf;
          else dst[s + j - 8]! |= (l & 0xf) << 4;
          l >>= 4;
          dst[s + (j % 4) + 8]! |= l << (2 * (j >> 2));
        }
        writeF16(dst, o + 108, fround(1 / iscale));
      } else {
        writeF16(dst, o + 108, 0);
      }
      const dAll = readF16(dst, o + 108);
      for (let j = 0; j < 16; j++) {
        const sc = toInt8(q3kScale(dst, s, j) - 32);
        const d = fround(dAll * sc);
        if (d === 0) continue;
        for (let ii = 0; ii < 16; ii++) {
          const l = nearestInt(fround(src[x + 16 * j + ii]! / d));
          L[16 * j + ii] = (l < -4 ? -4 : l > 3 ? 3 : l) + 4;
        }
      }
      dst.fill(0, o, o + 32);
      let m = 0;
      let hm = 1;
      for (let j = 0; j < QK_K; j++) {
        if (L[j]! > 3) {
          dst[o + m]! |= hm;
          L[j] = L[j]! - 4;
        }
        if (++m === 32) {
          m = 0;
          hm <<= 1;
        }
      }
      for (let j = 0; j < QK_K; j += 128) {
        const q = o + 32 + (j >> 2);
        for (let l = 0; l < 32; l++) {
          dst[q + l] = L[j + l]! | (L[j + l + 32]! << 2) | (L[j + l + 64]! << 4) | (L[j + l + 96]! << 6);
        }
      }
    }
  },
};
