/**
 * IQ2_XXS: super-blocks of 256 values in 8 groups of 32, each group four 8-value points of the 256-entry E8-lattice
 * grid `iq2xxs_grid` with 7-bit sign indices and a 4-bit scale (ggml `block_iq2_xxs`, 66 bytes: f16 d; u16 qs[32]).
 * Group ib's 8 bytes at 2 + 8ib: bytes 0..3 are grid indices, the u32 at +4 holds four 7-bit sign indices
 * (bits 7l..7l+6) and the scale (bits 28..31). value = d·(0.5 + scale)·0.25 · grid[j] · sign.
 * Dequantize only: ggml's quantizer needs an importance matrix (see `QuantType.quantizeRow`).
 */

import { GgmlType } from '../gguf/types.js';
import { iqGrids } from './iq-grids.js';
import { readF16 } from './half.js';
import { KSIGNS_IQ2XS, signOf } from './iq-signs.js';
import type { QuantType } from './quant-type.js';
import { checkDequantizeArgs } from './row-args.js';

const fround = Math.fround;
const QK_K = 256;
const BLOCK_BYTES = 66;

/** The IQ2_XXS type. */
export const iq2_xxs: QuantType = {
  id: GgmlType.IQ2_XXS,
  name: 'IQ2_XXS',
  blockElements: QK_K,
  blockBytes: BLOCK_BYTES,
  f16Scales: [0],
  wasm: 'dequantize',
  webgpu: { snippet: 'iq2_xxs', headToTail: 2, groupBlocks: 0, fastDot32: false, tables: ['iq2xxs_grid', 'iq_signs'] },
  dequantizeRow(src: Uint8Array, dst: Float32Array, nElements: number): void {
    const IQ2XXS_GRID = iqGrids().iq2xxs; // ggml `iq2xxs_grid` (loaded with the model)
    const nb = checkDequantizeArgs(this, src, dst, nElements);
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
  },
};
