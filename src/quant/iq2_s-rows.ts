/**
 * The IQ2_S dequantizer (its QuantType entry is iq2_s.ts): part of the lazily loaded IQ grid chunk
 * (grids/iq-grid-tables.ts), which `loadIqGrids` imports before any IQ1–IQ3 data is dequantized.
 */

import { readF16 } from './half.js';
import { iqGrids } from './iq-grids.js';
import { signOf } from './iq-signs.js';
import type { QuantType } from './quant-type.js';
import { checkDequantizeArgs } from './row-args.js';

const fround = Math.fround;
const QK_K = 256;
const BLOCK_BYTES = 82;

/** Dequantizes `nElements` values of IQ2_S blocks from `src` into `dst` (`qt`: the IQ2_S entry, for the checks). */
export function dequantizeRowIq2S(qt: QuantType, src: Uint8Array, dst: Float32Array, nElements: number): void {
  const IQ2S_GRID = iqGrids().iq2s; // ggml `iq2s_grid` (loaded with the model)
  const nb = checkDequantizeArgs(qt, src, dst, nElements);
  for (let i = 0; i < nb; i++) {
    const o = i * BLOCK_BYTES;
    const d = readF16(src, o);
    for (let ib = 0; ib < 8; ib++) {
      const sc = src[o + 74 + ib]!;
      const qh = src[o + 66 + ib]!;
      const db0 = fround(fround(d * (0.5 + (sc & 0xf))) * 0.25);
      const db1 = fround(fround(d * (0.5 + (sc >> 4))) * 0.25);
      for (let l = 0; l < 4; l++) {
        const g = 8 * (src[o + 2 + 4 * ib + l]! | (((qh >> (2 * l)) & 3) << 8));
        const signs = src[o + 34 + 4 * ib + l]!;
        const db = l < 2 ? db0 : db1;
        const y = i * QK_K + 32 * ib + 8 * l;
        for (let j = 0; j < 8; j++) dst[y + j] = fround(db * IQ2S_GRID[g + j]!) * signOf(signs, j);
      }
    }
  }
}
