/**
 * IQ2_S: super-blocks of 256 values in 8 groups of 32 (ggml `block_iq2_s`, 82 bytes: f16 d; u8 qs[64]; u8 qh[8];
 * u8 scales[8]). qs[0..31] are the low 8 bits of the 10-bit indices into the 1024-entry grid `iq2s_grid` (point l
 * of group ib: qs[4ib + l] | bits 2l..2l+1 of qh[ib] << 8), qs[32..63] the points' explicit sign bytes. Scales as
 * IQ2_XS: value = d·(0.5 + scale)·0.25 · grid[j] · sign. Dequantize only (see `QuantType.quantizeRow`).
 */

import { GgmlType } from '../gguf/types.js';
import { iqGrids } from './iq-grids.js';
import type { QuantType } from './quant-type.js';

const QK_K = 256;
const BLOCK_BYTES = 82;

/** The IQ2_S type. */
export const iq2_s: QuantType = {
  id: GgmlType.IQ2_S,
  name: 'IQ2_S',
  blockElements: QK_K,
  blockBytes: BLOCK_BYTES,
  f16Scales: [0],
  wasm: 'dequantize',
  webgpu: { snippet: 'iq2_s', headToTail: 2, groupBlocks: 0, fastDot32: false, tables: ['iq2s_grid', 'iq_signs'] },
  dequantizeRow(src: Uint8Array, dst: Float32Array, nElements: number): void {
    iqGrids().rows.iq2_s(this, src, dst, nElements); // iq2_s-rows.ts, loaded with the grids
  },
};
