/**
 * Q4_K: super-blocks of 256 4-bit quants in 8 sub-blocks of 32, each with a 6-bit scale and 6-bit min under f16
 * super-scales (ggml `block_q4_K`, 144 bytes: f16 d, dmin; u8 scales[12]; u8 qs[128]). For each 64 elements, 32 bytes
 * hold sub-block 2k in the low nibbles and 2k+1 in the high; value = (d·sc)·q − (dmin·m) in f32.
 * Reference quantizer: ggml's `quantize_row_q4_K_ref`.
 */

import { GgmlType } from '../gguf/types.js';
import { readF16, roundToF16, writeF16 } from './half.js';
import { getScaleMinK4, makeQkx2Quants } from './k-quant-scales.js';
import type { QuantType } from './quant-type.js';
import { nearestInt } from './rounding.js';
import { checkDequantizeArgs, checkQuantizeArgs } from './row-args.js';

const fround = Math.fround;
const QK_K = 256;
const BLOCK_BYTES = 144;

// Module scratch for quantizeKSuperBlock (used synchronously only).
const SCRATCH = {
  weights: new Float32Array(32), // per-element error weights of one sub-block
  laux: new Uint8Array(32), // trial quants of one sub-block
  mins: new Float32Array(8), // −min of each sub-block
  scales: new Float32Array(8), // scale of each sub-block
};

/**
 * Shared Q4_K/Q5_K step: 8 sub-block scale/min searches (weights av_x + |x|), 6-bit packing into `dst[o+4 ..]`, the
 * f16 d/dmin at `dst[o]`, `dst[o+2]`, and the final per-element quants L (0..nmax) with the stored scales.
 */
export function quantizeKSuperBlock(
  x: Float32Array,
  xo: number,
  dst: Uint8Array,
  o: number,
  nmax: number,
  rmin: number,
  nstep: number,
  L: Uint8Array,
): void {
  const { weights, laux, mins, scales } = SCRATCH;
  let maxScale = 0;
  let maxMin = 0;
  for (let j = 0; j < 8; j++) {
    let sumX2 = 0;
    for (let l = 0; l < 32; l++) {
      const v = x[xo + 32 * j + l]!;
      sumX2 = fround(sumX2 + fround(v * v));
    }
    const avX = fround(Math.sqrt(fround(sumX2 / 32)));
    for (let l = 0; l < 32; l++) weights[l] = fround(avX + Math.abs(x[xo + 32 * j + l]!));
    scales[j] = makeQkx2Quants(
      32,
      nmax,
      x,
      xo + 32 * j,
      weights,
      L,
      32 * j,
      mins,
      j,
      laux,
      rmin,
      fround(0.1),
      nstep,
      false,
    );
    if (scales[j]! > maxScale) maxScale = scales[j]!;
    if (mins[j]! > maxMin) maxMin = mins[j]!;
  }
  const invScale = maxScale > 0 ? fround(63 / maxScale) : 0;
  const invMin = maxMin > 0 ? fround(63 / maxMin) : 0;
  const s = o + 4;
  for (let j = 0; j < 8; j++) {
    const ls = Math.min(63, nearestInt(fround(invScale * scales[j]!)) & 0xff);
    const lm = Math.min(63, nearestInt(fround(invMin * mins[j]!)) & 0xff);
    if (j < 4) {
      dst[s + j] = ls;
      dst[s + j + 4] = lm;
    } else {
      dst[s + j + 4] = (ls & 0xf) | ((lm & 0xf) << 4);
      dst[s + j - 4]! |= (ls >> 4) << 6;
      dst[s + j]! |= (lm >> 4) << 6;
    }
  }
  writeF16(dst, o, fround(maxScale / 63));
  writeF16(dst, o + 2, fround(maxMin / 63));
  const dAll = roundToF16(fround(maxScale / 63));
  const mAll = roundToF16(fround(maxMin / 63));
  for (let j = 0; j < 8; j++) {
    const sm = getScaleMinK4(j, dst, s);
    const d = fround(dAll * (sm & 0xff));
    if (d === 0) continue;
    const dm = fround(mAll * (sm >> 8));
    for (let ii = 0; ii < 32; ii++) {
      const l = nearestInt(fround(fround(x[xo + 32 * j + ii]! + dm) / d));
      L[32 * j + ii] = l < 0 ? 0 : l > nmax ? nmax : l;
    }
  }
}

/** The Q4_K type. */
export const q4_k: QuantType = {
  id: GgmlType.Q4_K,
  name: 'Q4_K',
  blockElements: QK_K,
  blockBytes: BLOCK_BYTES,
  f16Scales: [0, 2],
  wasm: { kernel: 'gemv_q4_k', activations: 'q8', rows4: { kernel: 'gemv_q4_k_r4', head: 2, tail: 0 } },
  webgpu: { snippet: 'q4_k', headToTail: 0, groupBlocks: 0, fastDot32: true },
  dequantizeRow(src: Uint8Array, dst: Float32Array, nElements: number): void {
    const nb = checkDequantizeArgs(this, src, dst, nElements);
    for (let i = 0; i < nb; i++) {
      const o = i * BLOCK_BYTES;
      const d = readF16(src, o);
      const min = readF16(src, o + 2);
      let y = i * QK_K;
      for (let j = 0, is = 0; j < QK_K; j += 64, is += 2) {
        const sm1 = getScaleMinK4(is, src, o + 4);
        const sm2 = getScaleMinK4(is + 1, src, o + 4);
        const d1 = fround(d * (sm1 & 0xff));
        const m1 = fround(min * (sm1 >> 8));
        const d2 = fround(d * (sm2 & 0xff));
        const m2 = fround(min * (sm2 >> 8));
        const q = o + 16 + (j >> 1);
        for (let l = 0; l < 32; l++) dst[y++] = fround(d1 * (src[q + l]! & 0xf)) - m1;
        for (let l = 0; l < 32; l++) dst[y++] = fround(d2 * (src[q + l]! >> 4)) - m2;
      }
    }
  },
  quantizeRow(src: Float32Array, dst: Uint8Array): void {
    const nb = checkQuantizeArgs(this, src, dst);
    const L = new Uint8Array(QK_K); // (256) quants 0..15
    for (let i = 0; i < nb; i++) {
      const o = i * BLOCK_BYTES;
      quantizeKSuperBlock(src, i * QK_K, dst, o, 15, -1, 20, L);
      for (let j = 0; j < QK_K; j += 64) {
        const q = o + 16 + (j >> 1);
        for (let l = 0; l < 32; l++) dst[q + l] = L[j + l]! | (L[j + l + 32]! << 4);
      }
    }
  },
};
