/**
 * The IQ1_M dequantizer (its QuantType entry is iq1_m.ts): part of the lazily loaded IQ grid chunk
 * (grids/iq-grid-tables.ts), which `loadIqGrids` imports before any IQ1–IQ3 data is dequantized.
 */

import { readF16 } from './half.js';
import { iqGrids } from './iq-grids.js';
import type { QuantType } from './quant-type.js';
import { checkDequantizeArgs } from './row-args.js';

const fround = Math.fround;
const QK_K = 256;
const BLOCK_BYTES = 56;
/** ggml IQ1M_DELTA. */
const DELTA = 0.125;

/** Dequantizes `nElements` values of IQ1_M blocks from `src` into `dst` (`qt`: the IQ1_M entry, for the checks). */
export function dequantizeRowIq1M(qt: QuantType, src: Uint8Array, dst: Float32Array, nElements: number): void {
  const grid = iqGrids().iq1s; // ggml `iq1s_grid` (loaded with the model)
  const GRID = new Int8Array(grid.buffer, grid.byteOffset, grid.length); // elements −1, 0, 1
  const nb = checkDequantizeArgs(qt, src, dst, nElements);
  const sc = [0, 0, 0, 0];
  const scale = new Uint8Array(2); // the assembled f16 scale, little-endian
  for (let i = 0; i < nb; i++) {
    const o = i * BLOCK_BYTES;
    for (let s = 0; s < 4; s++) sc[s] = src[o + 48 + 2 * s]! | (src[o + 49 + 2 * s]! << 8);
    const h = (sc[0]! >> 12) | ((sc[1]! >> 8) & 0xf0) | ((sc[2]! >> 4) & 0xf00) | (sc[3]! & 0xf000);
    scale[0] = h & 0xff;
    scale[1] = h >> 8;
    const d = readF16(scale, 0);
    for (let ib = 0; ib < 8; ib++) {
      const w = sc[ib >> 1]! >> (6 * (ib & 1));
      const dl1 = fround(d * (2 * (w & 7) + 1));
      const dl2 = fround(d * (2 * ((w >> 3) & 7) + 1));
      for (let l = 0; l < 4; l++) {
        const qh = src[o + 32 + 2 * ib + (l >> 1)]! >> (4 * (l & 1));
        const g = 8 * (src[o + 4 * ib + l]! | ((qh & 7) << 8));
        const delta = qh & 8 ? -DELTA : DELTA;
        const dl = l < 2 ? dl1 : dl2;
        const y = i * QK_K + 32 * ib + 8 * l;
        for (let j = 0; j < 8; j++) dst[y + j] = dl * (GRID[g + j]! + delta);
      }
    }
  }
}
