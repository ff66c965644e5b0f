/**
 * The IQ2_XS dequantizer (its QuantType entry is iq2_xs.ts): part of the lazily loaded IQ grid chunk
 * (grids/iq-grid-tables.ts), which `loadIqGrids` imports before any IQ1–IQ3 data is dequantized.
 */

import { readF16 } from './half.js';
import { iqGrids } from './iq-grids.js';
import { KSIGNS_IQ2XS, signOf } from './iq-signs.js';
import type { QuantType } from './quant-type.js';
import { checkDequantizeArgs } from './row-args.js';

const fround = Math.fround;
const QK_K = 256;
const BLOCK_BYTES = 74;

/** Dequantizes `nElements` values of IQ2_XS blocks from `src` into `dst` (`qt`: the IQ2_XS entry, for the checks). */
export function dequantizeRowIq2Xs(qt: QuantType, src: Uint8Array, dst: Float32Array, nElements: number): void {
  const IQ2XS_GRID = iqGrids().iq2xs; // ggml `iq2xs_grid` (loaded with the model)
  const nb = checkDequantizeArgs(qt, src, dst, nElements);
  for (let i = 0; i < nb; i++) {
    const o = i * BLOCK_BYTES;
    const d = readF16(src, o);
    for (let ib = 0; ib < 8; ib++) {
      const sc = src[o + 66 + ib]!;
      const db0 = fround(fround(d * (0.5 + (sc & 0xf))) * 0.25);
      const db1 = fround(fround(d * (0.5 + (sc >> 4))) * 0.25);
      for (let l = 0; l < 4; l++) {
        const q = o + 2 + 8 * ib + 2 * l;
        const v = src[q]! | (src[q + 1]! << 8);
        const g = 8 * (v & 511);
        const signs = KSIGNS_IQ2XS[v >> 9]!;
        const db = l < 2 ? db0 : db1;
        const y = i * QK_K + 32 * ib + 8 * l;
        for (let j = 0; j < 8; j++) dst[y + j] = fround(db * IQ2XS_GRID[g + j]!) * signOf(signs, j);
      }
    }
  }
}
