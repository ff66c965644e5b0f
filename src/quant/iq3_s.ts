/**
 * IQ3_S: super-blocks of 256 values in 8 groups of 32 (ggml `block_iq3_s`, 110 bytes: f16 d; u8 qs[64]; u8 qh[8];
 * u8 signs[32]; u8 scales[4]). Point p (4 values) of group ib indexes the 512-entry grid `iq3s_grid` with
 * qs[8ib + p] | bit p of qh[ib] << 8; signs[4ib + l] holds the explicit signs of values 8l..8l+7. Scale nibble
 * (low for even ib, high for odd) of scales[ib/2]: value = d·(1 + 2·scale) · grid[j] · sign. Dequantize only.
 */

import { GgmlType } from '../gguf/types.js';
import { iqGrids } from './iq-grids.js';
import type { QuantType } from './quant-type.js';

const QK_K = 256;
const BLOCK_BYTES = 110;

/** The IQ3_S type. */
export const iq3_s: QuantType = {
  id: GgmlType.IQ3_S,
  name: 'IQ3_S',
  blockElements: QK_K,
  blockBytes: BLOCK_BYTES,
  f16Scales: [0],
  wasm: 'dequantize',
  webgpu: { snippet: 'iq3_s', headToTail: 2, groupBlocks: 0, fastDot32: false, tables: ['iq3s_grid', 'iq_signs'] },
  dequantizeRow(src: Uint8Array, dst: Float32Array, nElements: number): void {
    iqGrids().rows.iq3_s(this, src, dst, nElements); // iq3_s-rows.ts, loaded with the grids
  },
};
