/**
 * The IQ3_S dequantizer (its QuantType entry is iq3_s.ts): part of the lazily loaded IQ grid chunk
 * (grids/iq-grid-tables.ts), which `loadIqGrids` imports before any IQ1–IQ3 data is dequantized.
 */

import { readF16 } from './half.js';
import { iqGrids } from './iq-grids.js';
import { signOf } from './iq-signs.js';
import type { QuantType } from './quant-type.js';
import { checkDequantizeArgs } from './row-args.js';

const fround = Math.fround;
const QK_K = 256;
const BLOCK_BYTES = 110;

/** Dequantizes `nElements` values of IQ3_S blocks from `src` into `dst` (`qt`: the IQ3_S entry, for the checks). */
export function dequantizeRowIq3S(qt: QuantType, src: Uint8Array, dst: Float32Array, nElements: number): void {
  const IQ3S_GRID = iqGrids().iq3s; // ggml `iq3s_grid` (loaded with the model)
  const nb = checkDequantizeArgs(qt, src, dst, nElements);
  for (let i = 0; i < nb; i++) {
    const o = i * BLOCK_BYTES;
    const d = readF16(src, o);
    for (let ib = 0; ib < 8; ib++) {
      const db = fround(d * (1 + 2 * ((src[o + 106 + (ib >> 1)]! >> (4 * (ib & 1))) & 0xf)));
      const qh = src[o + 66 + ib]!;
      for (let l = 0; l < 4; l++) {
        const g1 = 4 * (src[o + 2 + 8 * ib + 2 * l]! | (((qh >> (2 * l)) & 1) << 8));
        const g2 = 4 * (src[o + 2 + 8 * ib + 2 * l + 1]! | (((qh >> (2 * l + 1)) & 1) << 8));
        const signs = src[o + 74 + 4 * ib + l]!;
        const y = i * QK_K + 32 * ib + 8 * l;
        for (let j = 0; j < 4; j++) {
          dst[y + j] = fround(db * IQ3S_GRID[g1 + j]!) * signOf(signs, j);
          dst[y + j + 4] = fround(db * IQ3S_GRID[g2 + j]!) * signOf(signs, j + 4);
        }
      }
    }
  }
}
