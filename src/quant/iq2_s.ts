/**
 * IQ2_S: super-blocks of 256 values in 8 groups of 32 (ggml `block_iq2_s`, 82 bytes: f16 d; u8 qs[64]; u8 qh[8];
 * u8 scales[8]). qs[0..31] are the low 8 bits of the 10-bit indices into the 1024-entry grid `iq2s_grid` (point l
 * of group ib: qs[4ib + l] | bits 2l..2l+1 of qh[ib] << 8), qs[32..63] the points' explicit sign bytes. Scales as
 * IQ2_XS: value = d·(0.5 + scale)·0.25 · grid[j] · sign. Dequantize only (see `QuantType.quantizeRow`).
 */

import { GgmlType } from '../gguf/types.js';
import { iqGrids } from './iq-grids.js';
import { readF16 } from './half.js';
import { signOf } from './iq-signs.js';
import type { QuantType } from './quant-type.js';
import { checkDequantizeArgs } from './row-args.js';

const fround = Math.fround;
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
    const IQ2S_GRID = iqGrids().iq2s; // ggml `iq2s_grid` (loaded with the model)
    const nb = checkDequantizeArgs(this, src, dst, nElements);
    for (let i = 0; i < nb; i++) {
      const o = i * BLOCK_BYTES;
      const d = readF16(src, o);
      for (let ib = 0; ib < 8; ib++) {
        const sc = src[o + 74 + ib]!;
        const qh = src[o + 66 + ib]!;
        const db0 = fround(fround(d * (0.5 + (sc & 0xf))) * 0.25);
        const db1 = fround(fround(d * (0.5 + (sc >> 4))) * 0.25);
        for (let l = 0; l < 4; l++) {
          const g = 8 * (src[o + 2 + 4 * ib + l]! | (((qh >> (2 * l)) & 3) << 8));
          const signs = src[o + 34 + 4 * ib + l]!;
          const db = l < 2 ? db0 : db1;
          const y = i * QK_K + 32 * ib + 8 * l;
          for (let j = 0; j < 8; j++) dst[y + j] = fround(db * IQ2S_GRID[g + j]!) * signOf(signs, j);
        }
      }
    }
  },
};
