/**
 * IQ1_S: super-blocks of 256 values in 8 groups of 32 (ggml `block_iq1_s`, 50 bytes: f16 d; u8 qs[32]; u16 qh[8]).
 * Point l (8 values in {−1, 0, 1}) of group ib indexes the 2048-entry grid `iq1s_grid` with
 * qs[4ib + l] | bits 3l..3l+2 of qh[ib] << 8; qh[ib] bits 12..14 are the scale, bit 15 the delta's sign.
 * value = d·(2·scale + 1) · (grid[j] ± 0.125). Dequantize only (ggml's quantizer needs an importance matrix).
 */

import { GgmlType } from '../gguf/types.js';
import { iqGrids } from './iq-grids.js';
import type { QuantType } from './quant-type.js';

const QK_K = 256;
const BLOCK_BYTES = 50;

/** The IQ1_S type. */
export const iq1_s: QuantType = {
  id: GgmlType.IQ1_S,
  name: 'IQ1_S',
  blockElements: QK_K,
  blockBytes: BLOCK_BYTES,
  f16Scales: [0],
  wasm: 'dequantize',
  webgpu: { snippet: 'iq1_s', headToTail: 2, groupBlocks: 0, fastDot32: false, tables: ['iq1s_grid'] },
  dequantizeRow(src: Uint8Array, dst: Float32Array, nElements: number): void {
    iqGrids().rows.iq1_s(this, src, dst, nElements); // iq1_s-rows.ts, loaded with the grids
  },
};
