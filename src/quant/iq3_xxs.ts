/**
 * IQ3_XXS: super-blocks of 256 values in 8 groups of 32 (ggml `block_iq3_xxs`, 98 bytes: f16 d; u8 qs[96]).
 * qs[0..63] index the 256-entry grid `iq3xxs_grid` (4 values per point, two points per 8 values); group ib's u32
 * at qs[64 + 4ib] holds four 7-bit sign indices (bits 7l..7l+6) and the scale (bits 28..31).
 * value = d·(0.5 + scale)·0.5 · grid[j] · sign. Dequantize only (see `QuantType.quantizeRow`).
 */

import { GgmlType } from '../gguf/types.js';
import { iqGrids } from './iq-grids.js';
import { readF16 } from './half.js';
import { KSIGNS_IQ2XS, signOf } from './iq-signs.js';
import type { QuantType } from './quant-type.js';
import { checkDequantizeArgs } from './row-args.js';

const fround = Math.fround;
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
    const IQ3XXS_GRID = iqGrids().iq3xxs; // ggml `iq3xxs_grid` (loaded with the model)
    const nb = checkDequantizeArgs(this, src, dst, nElements);
    for (let i = 0; i < nb; i++) {
      const o = i * BLOCK_BYTES;
      const d = readF16(src, o);
      for (let ib = 0; ib < 8; ib++) {
        const s = o + 66 + 4 * ib;
        const aux = (src[s]! | (src[s + 1]! << 8) | (src[s + 2]! << 16) | (src[s + 3]! << 24)) >>> 0;
        const db = fround(fround(d * (0.5 + (aux >>> 28))) * 0.5);
        for (let l = 0; l < 4; l++) {
          const signs = KSIGNS_IQ2XS[(aux >>> (7 * l)) & 127]!;
          const g1 = 4 * src[o + 2 + 8 * ib + 2 * l]!;
          const g2 = 4 * src[o + 2 + 8 * ib + 2 * l + 1]!;
          const y = i * QK_K + 32 * ib + 8 * l;
          for (let j = 0; j < 4; j++) {
            dst[y + j] = fround(db * IQ3XXS_GRID[g1 + j]!) * signOf(signs, j);
            dst[y + j + 4] = fround(db * IQ3XXS_GRID[g2 + j]!) * signOf(signs, j + 4);
          }
        }
      }
    }
  },
};
