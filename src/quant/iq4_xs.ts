/**
 * IQ4_XS: super-blocks of 256 IQ4 codebook indices in 8 sub-blocks of 32 with 6-bit sub-scales (ggml `block_iq4_xs`,
 * 136 bytes: f16 d; u16 scales_h; u8 scales_l[4]; u8 qs[128]). Sub-block scale ls = low nibble from scales_l |
 * 2 high bits from scales_h; value = d·(ls − 32)·kvalues[idx]. Reference quantizer: ggml's `quantize_row_iq4_xs_ref`.
 */

import { GgmlType } from '../gguf/types.js';
import { readF16 } from './half.js';
import { KVALUES_IQ4NL, makeIq4Scratch, quantizeIq4Block, type Iq4BlockLayout } from './iq4-nonlinear.js';
import type { QuantType } from './quant-type.js';
import { checkDequantizeArgs, checkQuantizeArgs } from './row-args.js';

const fround = Math.fround;
const QK_K = 256;
const BLOCK_BYTES = 136;
const LAYOUT: Iq4BlockLayout = {
  superBlockSize: 256,
  dOffset: 0,
  scalesHOffset: 2,
  scalesLOffset: 4,
  qsOffset: 8,
  ntry: 7,
};

/** The IQ4_XS type. */
export const iq4_xs: QuantType = {
  id: GgmlType.IQ4_XS,
  name: 'IQ4_XS',
  blockElements: QK_K,
  blockBytes: BLOCK_BYTES,
  f16Scales: [0],
  wasm: 'dequantize',
  webgpu: { snippet: 'iq4_xs', headToTail: 0, groupBlocks: 0, fastDot32: false },
  dequantizeRow(src: Uint8Array, dst: Float32Array, nElements: number): void {
    const nb = checkDequantizeArgs(this, src, dst, nElements);
    const kv = KVALUES_IQ4NL;
    for (let i = 0; i < nb; i++) {
      const o = i * BLOCK_BYTES;
      const d = readF16(src, o);
      const scalesH = src[o + 2]! | (src[o + 3]! << 8);
      for (let ib = 0; ib < 8; ib++) {
        const ls = ((src[o + 4 + (ib >> 1)]! >> (4 * (ib % 2))) & 0xf) | (((scalesH >> (2 * ib)) & 3) << 4);
        const dl = fround(d * (ls - 32));
        const qs = o + 8 + 16 * ib;
        const y = i * QK_K + 32 * ib;
        for (let j = 0; j < 16; j++) {
          const b = src[qs + j]!;
          dst[y + j] = dl * kv[b & 0x0f]!;
          dst[y + j + 16] = dl * kv[b >> 4]!;
        }
      }
    }
  },
  quantizeRow(src: Float32Array, dst: Uint8Array): void {
    const nb = checkQuantizeArgs(this, src, dst);
    const scratch = makeIq4Scratch(QK_K);
    for (let i = 0; i < nb; i++) quantizeIq4Block(src, i * QK_K, dst, i * BLOCK_BYTES, LAYOUT, scratch);
  },
};
