/**
 * IQ3_XXS: super-blocks of 256 values in 8 groups of 32 (ggml `block_iq3_xxs`, 98 bytes: f16 d; u8 qs[96]).
 * qs[0..63] index the 256-entry grid `iq3xxs_grid` (4 values per point, two points per 8 values); group ib's u32
 * at qs[64 + 4ib] holds four 7-bit sign indices (bits 7l..7l+6) and the scale (bits 28..31).
 * value = d·(0.5 + scale)·0.5 · grid[j] · sign. Dequantize only (see `QuantType.quantizeRow`).
 */

import { GgmlType } from '../gguf/types.js';
import { iqGrids } from './iq-grids.js';
import type { QuantType } from './quant-type.js';

const QK_K = 256;
const BLOCK_BYTES = 98;

/** The IQ3_XXS type. */
export const iq3_xxs: QuantType = {
  id: GgmlType.IQ3_XXS,
  name: 'IQ3_XXS',
  blockElements: QK_K,
  blockBytes: BLOCK_BYTES,
  f16Scales: [0],
  wasm: 'dequantize',
  webgpu: { snippet: 'iq3_xxs', headToTail: 2, groupBlocks: 0, fastDot32: false, tables: ['iq3xxs_grid', 'iq_signs'] },
  dequantizeRow(src: Uint8Array, dst: Float32Array, nElements: number): void {
    iqGrids().rows.iq3_xxs(this, src, dst, nElements); // iq3_xxs-rows.ts, loaded with the grids
  },
};
