/**
 * IQ4_NL: blocks of 32 4-bit indices into a non-linear int8 codebook, one f16 scale (ggml `block_iq4_nl`, 18 bytes:
 * f16 d; u8 qs[16]). Byte j holds element j (low nibble) and j+16 (high); value = d·kvalues[idx].
 * Reference quantizer: ggml's `quantize_row_iq4_nl_ref`.
 */

import { GgmlType } from '../gguf/types.js';
import { readF16 } from './half.js';
import { KVALUES_IQ4NL, makeIq4Scratch, quantizeIq4Block, type Iq4BlockLayout } from './iq4-nonlinear.js';
import type { QuantType } from './quant-type.js';
import { checkDequantizeArgs, checkQuantizeArgs } from './row-args.js';

const QK = 32;
const BLOCK_BYTES = 18;
const LAYOUT: Iq4BlockLayout = {
  superBlockSize: 32,
  dOffset: 0,
  scalesHOffset: -1,
  scalesLOffset: -1,
  qsOffset: 2,
  ntry: -1,
};

/** The IQ4_NL type. */
export const iq4_nl: QuantType = {
  id: GgmlType.IQ4_NL,
  name: 'IQ4_NL',
  blockElements: QK,
  blockBytes: BLOCK_BYTES,
  f16Scales: [0],
  wasm: 'dequantize',
  webgpu: { snippet: 'iq4_nl', headToTail: 2, groupBlocks: 0, fastDot32: false, hardwareRows: true, chunkDot: true },
  dequantizeRow(src: Uint8Array, dst: Float32Array, nElements: number): void {
    const nb = checkDequantizeArgs(this, src, dst, nElements);
    const kv = KVALUES_IQ4NL;
    for (let i = 0; i < nb; i++) {
      const o = i * BLOCK_BYTES;
      const d = readF16(src, o);
      const y = i * QK;
      for (let j = 0; j < 16; j++) {
        const b = src[o + 2 + j]!;
        dst[y + j] = d * kv[b & 0x0f]!;
        dst[y + j + 16] = d * kv[b >> 4]!;
      }
    }
  },
  quantizeRow(src: Float32Array, dst: Uint8Array): void {
    const nb = checkQuantizeArgs(this, src, dst);
    const scratch = makeIq4Scratch(QK);
    for (let i = 0; i < nb; i++) quantizeIq4Block(src, i * QK, dst, i * BLOCK_BYTES, LAYOUT, scratch);
  },
};
