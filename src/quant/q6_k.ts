/**
 * Q6_K: super-blocks of 256 6-bit quants in 16 sub-blocks of 16 with int8 scales under an f16 scale (ggml
 * `block_q6_K`, 210 bytes: u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d). Per 128 elements: 64 ql bytes (low nibbles)
 * and 32 qh bytes (2 high bits each for 4 elements); value = (d·sc)·(q − 32) in f32.
 * Reference quantizer: ggml's `quantize_row_q6_K_ref`.
 */

import { GgmlType } from '../gguf/types.js';
import { readF16, roundToF16, writeF16 } from './half.js';
import { GROUP_MAX_EPS, makeQxQuants } from './k-quant-scales.js';
import type { QuantType } from './quant-type.js';
import { nearestInt, toInt8 } from './rounding.js';
import { checkDequantizeArgs, checkQuantizeArgs } from './row-args.js';

const fround = Math.fround;
const QK_K = 256;
const BLOCK_BYTES = 210;

/** The Q6_K type. */
export const q6_k: QuantType = {
  id: GgmlType.Q6_K,
  name: 'Q6_K',
  blockElements: QK_K,
  blockBytes: BLOCK_BYTES,
  f16Scales: [208],
  wasm: {
    kernel: 'gemv_q6_k',
    activations: 'q8',
    rows4: { kernel: 'gemv_q6_k_r4', head: 0, tail: 1, recode: 'q6_k' },
  },
  webgpu: { snippet: 'q6_k', headToTail: 0, groupBlocks: 0, fastDot32: true, softwareRecode: 'q6_k_i8' },
  dequantizeRow(src: Uint8Array, dst: Float32Array, nElements: number): void {
    const nb = checkDequantizeArgs(this, src, dst, nElements);
    const ds = new Float32Array(16); // per-sub-block f32 scales d·sc
    for (let i = 0; i < nb; i++) {
      const o = i * BLOCK_BYTES;
      const d = readF16(src, o + 208);
      for (let k = 0; k < 16; k++) ds[k] = d * toInt8(src[o + 192 + k]!); // f32 d·sc, rounded by the store
      for (let n = 0; n < 2; n++) {
        const ql = o + 64 * n;
        const qh = o + 128 + 32 * n;
        const y = i * QK_K + 128 * n;
        for (let half = 0; half < 2; half++) {
          const s = 8 * n + half;
          const d1 = ds[s]!;
          const d2 = ds[s + 2]!;
          const d3 = ds[s + 4]!;
          const d4 = ds[s + 6]!;
          for (let l = 16 * half; l < 16 * half + 16; l++) {
            const h = src[qh + l]!;
            const a = src[ql + l]!;
            const b = src[ql + l + 32]!;
            dst[y + l] = d1 * (((a & 0xf) | ((h & 3) << 4)) - 32);
            dst[y + l + 32] = d2 * (((b & 0xf) | (((h >> 2) & 3) << 4)) - 32);
            dst[y + l + 64] = d3 * (((a >> 4) | (((h >> 4) & 3) << 4)) - 32);
            dst[y + l + 96] = d4 * (((b >> 4) | (((h >> 6) & 3) << 4)) - 32);
          }
        }
      }
    }
  },
  quantizeRow(src: Float32Array, dst: Uint8Array): void {
    const nb = checkQuantizeArgs(this, src, dst);
    const L = new Int8Array(QK_K); // (256) quants 0..63
    const scales = new Float32Array(16);
    for (let i = 0; i < nb; i++) {
      const x = i * QK_K;
      const o = i * BLOCK_BYTES;
      let maxScale = 0;
      let maxAbsScale = 0;
      for (let ib = 0; ib < 16; ib++) {
        const scale = makeQxQuants(16, 32, src, x + 16 * ib, L, 16 * ib, 1);
        scales[ib] = scale;
        if (Math.abs(scale) > maxAbsScale) {
          maxAbsScale = Math.abs(scale);
          maxScale = scale;
        }
      }
      if (maxAbsScale < GROUP_MAX_EPS) {
        dst.fill(0, o, o + BLOCK_BYTES);
        continue;
      }
      const iscale = fround(-128 / maxScale);
      writeF16(dst, o + 208, fround(1 / iscale));
      const dAll = roundToF16(fround(1 / iscale));
      for (let ib = 0; ib < 16; ib++)
        dst[o + 192 + ib] = Math.min(127, nearestInt(fround(iscale * scales[ib]!))) & 0xff;
      for (let j = 0; j < 16; j++) {
        const d = fround(dAll * toInt8(dst[o + 192 + j]!));
        if (d === 0) continue;
        for (let ii = 0; ii < 16; ii++) {
          const l = nearestInt(fround(src[x + 16 * j + ii]! / d));
          L[16 * j + ii] = (l < -32 ? -32 : l > 31 ? 31 : l) + 32;
        }
      }
      for (let j = 0; j < QK_K; j += 128) {
        const ql = o + (j >> 1);
        const qh = o + 128 + (j >> 2);
        for (let l = 0; l < 32; l++) {
          const a = L[j + l]!;
          const b = L[j + l + 32]!;
          const c = L[j + l + 64]!;
          const e = L[j + l + 96]!;
          dst[ql + l] = (a & 0xf) | ((c & 0xf) << 4);
          dst[ql + l + 32] = (b & 0xf) | ((e & 0xf) << 4);
          dst[qh + l] = (a >> 4) | ((b >> 4) << 2) | ((c >> 4) << 4) | ((e >> 4) << 6);
        }
      }
    }
  },
};
