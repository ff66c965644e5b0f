/**
 * Q2_K: super-blocks of 256 2-bit quants in 16 sub-blocks of 16, each with a 4-bit scale and 4-bit min under f16
 * super-scales (ggml `block_q2_K`, 84 bytes: u8 scales[16]; u8 qs[64]; f16 d, dmin). qs packs 4 quants per byte
 * (strided by 32 within each 128); value = (d·(sc & 15))·q − (dmin·(sc >> 4)) in f32.
 * Reference quantizer: ggml's `quantize_row_q2_K_ref`.
 */

import { GgmlType } from '../gguf/types.js';
import { readF16, writeF16 } from './half.js';
import { makeQkx2Quants } from './k-quant-scales.js';
import type { QuantType } from './quant-type.js';
import { nearestInt } from './rounding.js';
import { checkDequantizeArgs, checkQuantizeArgs } from './row-args.js';

const fround = Math.fround;
const QK_K = 256;
const BLOCK_BYTES = 84;

/** The Q2_K type. */
export const q2_k: QuantType = {
  id: GgmlType.Q2_K,
  name: 'Q2_K',
  blockElements: QK_K,
  blockBytes: BLOCK_BYTES,
  f16Scales: [80, 82],
  wasm: 'dequantize',
  webgpu: { snippet: 'q2_k', headToTail: 0, groupBlocks: 0, fastDot32: false },
  dequantizeRow(src: Uint8Array, dst: Float32Array, nElements: number): void {
    const nb = checkDequantizeArgs(this, src, dst, nElements);
    for (let i = 0; i < nb; i++) {
      const o = i * BLOCK_BYTES;
      const d = readF16(src, o + 80);
      const min = readF16(src, o + 82);
      let y = i * QK_K;
      let is = 0;
      for (let n = 0; n < 2; n++) {
        const q = o + 16 + 32 * n;
        for (let shift = 0; shift < 8; shift += 2) {
          for (let half = 0; half < 32; half += 16) {
            const sc = src[o + is++]!;
            const dl = fround(d * (sc & 0xf));
            const ml = fround(min * (sc >> 4));
            for (let l = half; l < half + 16; l++) dst[y++] = fround(dl * ((src[q + l]! >> shift) & 3)) - ml;
          }
        }
      }
    }
  },
  quantizeRow(src: Float32Array, dst: Uint8Array): void {
    const nb = checkQuantizeArgs(this, src, dst);
    const L = new Uint8Array(QK_K); // (256) quants 0..3
    const laux = new Uint8Array(16);
    const weights = new Float32Array(16);
    const mins = new Float32Array(16);
    const scales = new Float32Array(16);
    const q4scale = 15;
    for (let i = 0; i < nb; i++) {
      const x = i * QK_K;
      const o = i * BLOCK_BYTES;
      let maxScale = 0;
      let maxMin = 0;
      for (let j = 0; j < 16; j++) {
        for (let l = 0; l < 16; l++) weights[l] = Math.abs(src[x + 16 * j + l]!);
        scales[j] = makeQkx2Quants(
          16,
          3,
          src,
          x + 16 * j,
          weights,
          L,
          16 * j,
          mins,
          j,
          laux,
          -0.5,
          fround(0.1),
          15,
          true,
        );
        if (scales[j]! > maxScale) maxScale = scales[j]!;
        if (mins[j]! > maxMin) maxMin = mins[j]!;
      }
      if (maxScale > 0) {
        const iscale = fround(q4scale / maxScale);
        for (let j = 0; j < 16; j++) dst[o + j] = nearestInt(fround(iscale * scales[j]!)) & 0xff;
        writeF16(dst, o + 80, fround(maxScale / q4scale));
      } else {
        dst.fill(0, o, o + 16);
        writeF16(dst, o + 80, 0);
      }
      if (maxMin > 0) {
        const iscale = fround(q4scale / maxMin);
        for (let j = 0; j < 16; j++) dst[o + j]! |= (nearestInt(fround(iscale * mins[j]!)) << 4) & 0xff;
        writeF16(dst, o + 82, fround(maxMin / q4scale));
      } else {
        writeF16(dst, o + 82, 0);
      }
      const dAll = readF16(dst, o + 80);
      const mAll = readF16(dst, o + 82);
      for (let j = 0; j < 16; j++) {
        const d = fround(dAll * (dst[o + j]! & 0xf));
        if (d === 0) continue;
        const dm = fround(mAll * (dst[o + j]! >> 4));
        for (let ii = 0; ii < 16; ii++) {
          const l = nearestInt(fround(fround(src[x + 16 * j + ii]! + dm) / d));
          L[16 * j + ii] = l < 0 ? 0 : l > 3 ? 3 : l;
        }
      }
      for (let j = 0; j < QK_K; j += 128) {
        const q = o + 16 + (j >> 2);
        for (let l = 0; l < 32; l++) {
          dst[q + l] = L[j + l]! | (L[j + l + 32]! << 2) | (L[j + l + 64]! << 4) | (L[j + l + 96]! << 6);
        }
      }
    }
  },
};
