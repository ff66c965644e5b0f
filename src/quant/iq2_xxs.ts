/**
 * IQ2_XXS: super-blocks of 256 values in 8 groups of 32, each group four 8-value points of the 256-entry E8-lattice
 * grid `iq2xxs_grid` with 7-bit sign indices and a 4-bit scale (ggml `block_iq2_xxs`, 66 bytes: f16 d; u16 qs[32]).
 * Group ib's 8 bytes at 2 + 8ib: bytes 0..3 are grid indices, the u32 at +4 holds four 7-bit sign indices
 * (bits 7l..7l+6) and the scale (bits 28..31). value = d·(0.5 + scale)·0.25 · grid[j] · sign.
 * Dequantize only: ggml's quantizer needs an importance matrix (see `QuantType.quantizeRow`).
 */

import { GgmlType } from '../gguf/types.js';
import { iqGrids } from './iq-grids.js';
import type { QuantType } from './quant-type.js';

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
    iqGrids().rows.iq2_xxs(this, src, dst, nElements); // iq2_xxs-rows.ts, loaded with the grids
  },
};
