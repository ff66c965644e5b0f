/**
 * IQ3_S: super-blocks of 256 values in 8 groups of 32 (ggml `block_iq3_s`, 110 bytes: f16 d; u8 qs[64]; u8 qh[8];
 * u8 signs[32]; u8 scales[4]). Point p (4 values) of group ib indexes the 512-entry grid `iq3s_grid` with
 * qs[8ib + p] | bit p of qh[ib] << 8; signs[4ib + l] holds the explicit signs of values 8l..8l+7. Scale nibble
 * (low for even ib, high for odd) of scales[ib/2]: value = d·(1 + 2·scale) · grid[j] · sign. Dequantize only.
 */

import { GgmlType } from '../gguf/types.js';
import { iqGrids } from './iq-grids.js';
import { readF16 } from './half.js';
import { signOf } from './iq-signs.js';
import type { QuantType } from './quant-type.js';
import { checkDequantizeArgs } from './row-args.js';

const fround = Math.fround;
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
    const IQ3S_GRID = iqGrids().iq3s; // ggml `iq3s_grid` (loaded with the model)
    const nb = checkDequantizeArgs(this, src, dst, nElements);
    for (let i = 0; i < nb; i++) {
      const o = i * BLOCK_BYTES;
      const d = readF16(src, o);
      for (let ib = 0; ib < 8; ib++) {
        const db = fround(d * (1 + 2 * ((src[o + 106 + (ib >> 1)]! >> (4 * (ib & 1))) & 0xf)));
        const qh = src[o + 66 + ib]!;
        for (let l = 0; l < 4; l++) {
          const g1 = 4 * (src[o + 2 + 8 * ib + 2 * l]! | (((qh >> (2 * l)) & 1) << 8));
          const g2 = 4 * (src[o + 2 + 8 * ib + 2 * l + 1]! | (((qh >> (2 * l + 1)) & 1) << 8));
          const signs = src[o + 74 + 4 * ib + l]!;
          const y = i * QK_K + 32 * ib + 8 * l;
          for (let j = 0; j < 4; j++) {
            dst[y + j] = fround(db * IQ3S_GRID[g1 + j]!) * signOf(signs, j);
            dst[y + j + 4] = fround(db * IQ3S_GRID[g2 + j]!) * signOf(signs, j + 4);
          }
        }
      }
    }
  },
};
