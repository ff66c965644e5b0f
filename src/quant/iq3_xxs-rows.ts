/**
 * The IQ3_XXS dequantizer (its QuantType entry is iq3_xxs.ts): part of the lazily loaded IQ grid chunk
 * (grids/iq-grid-tables.ts), which `loadIqGrids` imports before any IQ1–IQ3 data is dequantized.
 */

import { readF16 } from './half.js';
import { iqGrids } from './iq-grids.js';
import { KSIGNS_IQ2XS, signOf } from './iq-signs.js';
import type { QuantType } from './quant-type.js';
import { checkDequantizeArgs } from './row-args.js';

const fround = Math.fround;
const QK_K = 256;
const BLOCK_BYTES = 98;

/** Dequantizes `nElements` values of IQ3_XXS blocks from `src` into `dst` (`qt`: the IQ3_XXS entry, for the checks). */
export function dequantizeRowIq3Xxs(qt: QuantType, src: Uint8Array, dst: Float32Array, nElements: number): void {
  const IQ3XXS_GRID = iqGrids().iq3xxs; // ggml `iq3xxs_grid` (loaded with the model)
  const nb = checkDequantizeArgs(qt, src, dst, nElements);
  for (let i = 0; i < nb; i++) {
    const o = i * BLOCK_BYTES;
    const d = readF16(src, o);
    for (let ib = 0; ib < 8; ib++) {
      const s = o + 66 + 4 * ib;
      const aux = (src[s]! | (src[s + 1]! << 8) | (src[s + 2]! << 16) | (src[s + 3]! << 24)) >>> 0;
      const db = fround(fround(d * (0.5 + (aux >>> 28))) * 0.5);
      for (let l = 0; l < 4; l++) {
        const signs = KSIGNS_IQ2XS[(aux >>> (7 * l)) & 127]!;
        const g1 = 4 * src[o + 2 + 8 * ib + 2 * l]!;
        const g2 = 4 * src[o + 2 + 8 * ib + 2 * l + 1]!;
        const y = i * QK_K + 32 * ib + 8 * l;
        for (let j = 0; j < 4; j++) {
          dst[y + j] = fround(db * IQ3XXS_GRID[g1 + j]!) * signOf(signs, j);
          dst[y + j + 4] = fround(db * IQ3XXS_GRID[g2 + j]!) * signOf(signs, j + 4);
        }
      }
    }
  }
}
