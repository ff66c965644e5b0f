/**
 * IQ1_M: super-blocks of 256 values in 8 groups of 32 (ggml `block_iq1_m`, 56 bytes: u8 qs[32]; u8 qh[16];
 * u8 scales[8]), no separate scale field: the f16 super-block scale is the top nibbles of the four u16 of `scales`
 * (sc[0] >> 12 | (sc[1] >> 8) & 0xf0 | (sc[2] >> 4) & 0xf00 | sc[3] & 0xf000, ggml `iq1m_scale_t`). Point l of group ib
 * indexes `iq1s_grid` with qs[4ib + l] | 3 bits of qh[2ib + l/2] (bits 0..2 or 4..6) << 8; bit 3 or 7 of that qh byte is
 * the delta's sign. Group ib's 3-bit scales sit at bits 6(ib%2) and 6(ib%2)+3 of sc[ib/2] (first and second 16
 * values): value = d·(2·scale + 1) · (grid[j] ± 0.125). Dequantize only (see `QuantType.quantizeRow`).
 */

import { GgmlType } from '../gguf/types.js';
import { iqGrids } from './iq-grids.js';
import type { QuantType } from './quant-type.js';

const QK_K = 256;
const BLOCK_BYTES = 56;

/** The IQ1_M type. */
export const iq1_m: QuantType = {
  id: GgmlType.IQ1_M,
  name: 'IQ1_M',
  blockElements: QK_K,
  blockBytes: BLOCK_BYTES,
  f16Scales: [],
  wasm: 'dequantize',
  webgpu: { snippet: 'iq1_m', headToTail: 0, groupBlocks: 0, fastDot32: false, tables: ['iq1s_grid'] },
  dequantizeRow(src: Uint8Array, dst: Float32Array, nElements: number): void {
    iqGrids().rows.iq1_m(this, src, dst, nElements); // iq1_m-rows.ts, loaded with the grids
  },
};
