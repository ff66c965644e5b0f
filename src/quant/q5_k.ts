/**
 * Q5_K: super-blocks of 256 5-bit quants in 8 sub-blocks of 32 with 6-bit scales and mins under f16 super-scales
 * (ggml `block_q5_K`, 176 bytes: f16 d, dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]). Low nibbles as Q4_K; bit 4 of
 * sub-block s is bit s of qh[l]; value = (d·sc)·q − (dmin·m) in f32. Reference quantizer: `quantize_row_q5_K_ref`.
 */

import { GgmlType } from '../gguf/types.js';
import { readF16 } from './half.js';
import { getScaleMinK4 } from './k-quant-scales.js';
import { quantizeKSuperBlock } from './q4_k.js';
import type { QuantType } from './quant-type.js';
import { checkDequantizeArgs, checkQuantizeArgs } from './row-args.js';

const fround = Math.fround;
const QK_K = 256;
const BLOCK_BYTES = 176;

/** The Q5_K type. */
export const q5_k: QuantType = {
  id: GgmlType.Q5_K,
  name: 'Q5_K',
  blockElements: QK_K,
  blockBytes: BLOCK_BYTES,
  f16Scales: [0, 2],
  wasm: { kernel: 'gemv_q5_k', activations: 'q8', rows4: { kernel: 'gemv_q5_k_r4', head: 2, tail: 0, recode: 'q5_k' } },
  webgpu: { snippet: 'q5_k', headToTail: 0, groupBlocks: 0, fastDot32: true, softwareRecode: 'q5_k_i8' },
  dequantizeRow(src: Uint8Array, dst: Float32Array, nElements: number): void {
    const nb = checkDequantizeArgs(this, src, dst, nElements);
    for (let i = 0; i < nb; i++) {
      const o = i * BLOCK_BYTES;
      const d = readF16(src, o);
      const min = readF16(src, o + 2);
      const qh = o + 16;
      let y = i * QK_K;
      let u1 = 1;
      let u2 = 2;
      for (let j = 0, is = 0; j < QK_K; j += 64, is += 2) {
        const sm1 = getScaleMinK4(is, src, o + 4);
        const sm2 = getScaleMinK4(is + 1, src, o + 4);
        const d1 = fround(d * (sm1 & 0xff));
        const m1 = fround(min * (sm1 >> 8));
        const d2 = fround(d * (sm2 & 0xff));
        const m2 = fround(min * (sm2 >> 8));
        const ql = o + 48 + (j >> 1);
        for (let l = 0; l < 32; l++) {
          dst[y++] = fround(d1 * ((src[ql + l]! & 0xf) + (src[qh + l]! & u1 ? 16 : 0))) - m1;
        }
        for (let l = 0; l < 32; l++) {
          dst[y++] = fround(d2 * ((src[ql + l]! >> 4) + (src[qh + l]! & u2 ? 16 : 0))) - m2;
        }
        u1 <<= 2;
        u2 <<= 2;
      }
    }
  },
  quantizeRow(src: Float32Array, dst: Uint8Array): void {
    const nb = checkQuantizeArgs(this, src, dst);
    const L = new Uint8Array(QK_K); // (256) quants 0..31
    for (let i = 0; i < nb; i++) {
      const o = i * BLOCK_BYTES;
      quantizeKSuperBlock(src, i * QK_K, dst, o, 31, -0.5, 15, L);
      const qh = o + 16;
      dst.fill(0, qh, qh + 32);
      let m1 = 1;
      let m2 = 2;
      for (let n = 0; n < QK_K; n += 64) {
        const ql = o + 48 + (n >> 1);
        for (let j = 0; j < 32; j++) {
          let l1 = L[n + j]!;
          if (l1 > 15) {
            l1 -= 16;
            dst[qh + j]! |= m1;
          }
          let l2 = L[n + j + 32]!;
          if (l2 > 15) {
            l2 -= 16;
            dst[qh + j]! |= m2;
          }
          dst[ql + j] = l1 | (l2 << 4);
        }
        m1 <<= 2;
        m2 <<= 2;
      }
    }
  },
};
