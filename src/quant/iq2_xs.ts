/**
 * IQ2_XS: super-blocks of 256 values in 8 groups of 32 (ggml `block_iq2_xs`, 74 bytes: f16 d; u16 qs[32];
 * u8 scales[8]). Each u16 of qs is one 8-value point: bits 0..8 index the 512-entry grid `iq2xs_grid`, bits 9..15 a
 * sign index. Group ib has two 4-bit scales (low nibble for its first 16 values, high for the last 16);
 * value = d·(0.5 + scale)·0.25 · grid[j] · sign. Dequantize only (ggml's quantizer needs an importance matrix).
 */

import { GgmlType } from '../gguf/types.js';
import { iqGrids } from './iq-grids.js';
import type { QuantType } from './quant-type.js';

const QK_K = 256;
const BLOCK_BYTES = 74;

/** The IQ2_XS type. */
export const iq2_xs: QuantType = {
  id: GgmlType.IQ2_XS,
  name: 'IQ2_XS',
  blockElements: QK_K,
  blockBytes: BLOCK_BYTES,
  f16Scales: [0],
  wasm: 'dequantize',
  webgpu: { snippet: 'iq2_xs', headToTail: 2, groupBlocks: 0, fastDot32: false, tables: ['iq2xs_grid', 'iq_signs'] },
  dequantizeRow(src: Uint8Array, dst: Float32Array, nElements: number): void {
    iqGrids().rows.iq2_xs(this, src, dst, nElements); // iq2_xs-rows.ts, loaded with the grids
  },
};
