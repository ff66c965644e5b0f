/**
 * IQ1_S: super-blocks of 256 values in 8 groups of 32 (ggml `block_iq1_s`, 50 bytes: f16 d; u8 qs[32]; u16 qh[8]).
 * Point l (8 values in {−1, 0, 1}) of group ib indexes the 2048-entry grid `iq1s_grid` with
 * qs[4ib + l] | bits 3l..3l+2 of qh[ib] << 8; qh[ib] bits 12..14 are the scale, bit 15 the delta's sign.
 * value = d·(2·scale + 1) · (grid[j] ± 0.125). Dequantize only (ggml's quantizer needs an importance matrix).
 */

import { GgmlType } from '../gguf/types.js';
import { iqGrids } from './iq-grids.js';
import { readF16 } from './half.js';
import type { QuantType } from './quant-type.js';
import { checkDequantizeArgs } from './row-args.js';

const fround = Math.fround;
const QK_K = 256;
const BLOCK_BYTES = 50;
/** ggml IQ1S_DELTA. */
const DELTA = 0.125;

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
    const grid = iqGrids().iq1s; // ggml `iq1s_grid` (loaded with the model)
    const GRID = new Int8Array(grid.buffer, grid.byteOffset, grid.length); // elements −1, 0, 1
    const nb = checkDequantizeArgs(this, src, dst, nElements);
    for (let i = 0; i < nb; i++) {
      const o = i * BLOCK_BYTES;
      const d = readF16(src, o);
      for (let ib = 0; ib < 8; ib++) {
        const qh = src[o + 34 + 2 * ib]! | (src[o + 35 + 2 * ib]! << 8);
        const dl = fround(d * (2 * ((qh >> 12) & 7) + 1));
        const delta = qh & 0x8000 ? -DELTA : DELTA;
        for (let l = 0; l < 4; l++) {
          const g = 8 * (src[o + 2 + 4 * ib + l]! | (((qh >> (3 * l)) & 7) << 8));
          const y = i * QK_K + 32 * ib + 8 * l;
          for (let j = 0; j < 8; j++) dst[y + j] = dl * (GRID[g + j]! + delta);
        }
      }
    }
  },
};
