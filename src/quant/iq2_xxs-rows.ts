/**
 * The IQ2_XXS dequantizer (its QuantType entry is iq2_xxs.ts): part of the lazily loaded IQ grid chunk
 * (grids/iq-grid-tables.ts), which `loadIqGrids` imports before any IQ1–IQ3 data is dequantized.
 */

import { readF16 } from './half.js';
import { iqGrids } from './iq-grids.js';
import { KSIGNS_IQ2XS, signOf } from './iq-signs.js';
import type { QuantType } from './quant-type.js';
import { checkDequantizeArgs } from './row-args.js';

const fround = Math.fround;
const QK_K = 256;
const BLOCK_BYTES = 66;

/** Dequantizes `nElements` values of IQ2_XXS blocks from `src` into `dst` (`qt`: the IQ2_XXS entry, for the checks). */
export function dequantizeRowIq2Xxs(qt: QuantType, src: Uint8Array, dst: Float32Array, nElements: number): void {
  const IQ2XXS_GRID = iqGrids().iq2xxs; // ggml `iq2xxs_grid` (loaded with the model)
  const nb = checkDequantizeArgs(qt, src, dst, nElements);
  for (let i = 0; i < nb; i++) {
    const o = i * BLOCK_BYTES;
    const d = readF16(src, o);
    for (let ib = 0; ib < 8; ib++) {
      const q = o + 2 + 8 * ib;
      const aux = (src[q + 4]! | (src[q + 5]! << 8) | (src[q + 6]! << 16) | (src[q + 7]! << 24)) >>> 0;
      const db = fround(fround(d * (0.5 + (aux >>> 28))) * 0.25);
      for (let l = 0; l < 4; l++) {
        const g = 8 * src[q + l]!;
        const signs = KSIGNS_IQ2XS[(aux >>> (7 * l)) & 127]!;
        const y = i * QK_K + 32 * ib + 8 * l;
        for (let j = 0; j < 8; j++) dst[y + j] = fround(db * IQ2XXS_GRID[g + j]!) * signOf(signs, j);
      }
    }
  }
}
