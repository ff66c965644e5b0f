/**
 * The IQ1_S dequantizer (its QuantType entry is iq1_s.ts): part of the lazily loaded IQ grid chunk
 * (grids/iq-grid-tables.ts), which `loadIqGrids` imports before any IQ1–IQ3 data is dequantized.
 */

import { readF16 } from './half.js';
import { iqGrids } from './iq-grids.js';
import type { QuantType } from './quant-type.js';
import { checkDequantizeArgs } from './row-args.js';

const fround = Math.fround;
const QK_K = 256;
const BLOCK_BYTES = 50;
/** ggml IQ1S_DELTA. */
const DELTA = 0.125;

/** Dequantizes `nElements` values of IQ1_S blocks from `src` into `dst` (`qt`: the IQ1_S entry, for the checks). */
export function dequantizeRowIq1S(qt: QuantType, src: Uint8Array, dst: Float32Array, nElements: number): void {
  const grid = iqGrids().iq1s; // ggml `iq1s_grid` (loaded with the model)
  const GRID = new Int8Array(grid.buffer, grid.byteOffset, grid.length); // elements −1, 0, 1
  const nb = checkDequantizeArgs(qt, src, dst, nElements);
  for (let i = 0; i < nb; i++) {
    const o = i * BLOCK_BYTES;
    const d = readF16(src, o);
    for (let ib = 0; ib < 8; ib++) {
      const qh = src[o + 34 + 2 * ib]! | (src[o + 35 + 2 * ib]! << 8);
      const dl = fround(d * (2 * ((qh >> 12) & 7) + 1));
      const delta = qh & 0x8000 ? -DELTA : DELTA;
      for (let l = 0; l < 4; l++) {
        const g = 8 * (src[o + 2 + 4 * ib + l]! | (((qh >> (3 * l)) & 7) << 8));
        const y = i * QK_K + 32 * ib + 8 * l;
        for (let j = 0; j < 8; j++) dst[y + j] = dl * (GRID[g + j]! + delta);
      }
    }
  }
}
