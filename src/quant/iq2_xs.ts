/**
 * IQ2_XS: super-blocks of 256 values in 8 groups of 32 (ggml `block_iq2_xs`, 74 bytes: f16 d; u16 qs[32];
 * u8 scales[8]). Each u16 of qs is one 8-value point: bits 0..8 index the 512-entry grid `iq2xs_grid`, bits 9..15 a
 * sign index. Group ib has two 4-bit scales (low nibble for its first 16 values, high for the last 16);
 * value = d·(0.5 + scale)·0.25 · grid[j] · sign. Dequantize only (ggml's quantizer needs an importance matrix).
 */

import { GgmlType } from '../gguf/types.js';
import { iqGrids } from './iq-grids.js';
import { readF16 } from './half.js';
import { KSIGNS_IQ2XS, signOf } from './iq-signs.js';
import type { QuantType } from './quant-type.js';
import { checkDequantizeArgs } from './row-args.js';

const fround = Math.fround;
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
    const IQ2XS_GRID = iqGrids().iq2xs; // ggml `iq2xs_grid` (loaded with the model)
    const nb = checkDequantizeArgs(this, src, dst, nElements);
    for (let i = 0; i < nb; i++) {
      const o = i * BLOCK_BYTES;
      const d = readF16(src, o);
      for (let ib = 0; ib < 8; ib++) {
        const sc = src[o + 66 + ib]!;
        const db0 = fround(fround(d * (0.5 + (sc & 0xf))) * 0.25);
        const db1 = fround(fround(d * (0.5 + (sc >> 4))) * 0.25);
        for (let l = 0; l < 4; l++) {
          const q = o + 2 + 8 * ib + 2 * l;
          const v = src[q]! | (src[q + 1]! << 8);
          const g = 8 * (v & 511);
          const signs = KSIGNS_IQ2XS[v >> 9]!;
          const db = l < 2 ? db0 : db1;
          const y = i * QK_K + 32 * ib + 8 * l;
          for (let j = 0; j < 8; j++) dst[y + j] = fround(db * IQ2XS_GRID[g + j]!) * signOf(signs, j);
        }
      }
    }
  },
};
