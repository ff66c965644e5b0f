/**
 * Q8_0: blocks of 32 int8 quants with one f16 scale (ggml `block_q8_0`, 34 bytes: f16 d; i8 qs[32]).
 * value[j] = qs[j]·d. The reference quantizer is ggml's `quantize_row_q8_0_ref` (d = amax/127, roundf).
 */

import { GgmlType } from '../gguf/types.js';
import { readF16, writeF16 } from './half.js';
import type { QuantType } from './quant-type.js';
import { roundHalfAway } from './rounding.js';
import { checkDequantizeArgs, checkQuantizeArgs } from './row-args.js';

const fround = Math.fround;
const QK = 32;
const BLOCK_BYTES = 34;

/** The Q8_0 type. */
export const q8_0: QuantType = {
  id: GgmlType.Q8_0,
  name: 'Q8_0',
  blockElements: QK,
  blockBytes: BLOCK_BYTES,
  f16Scales: [0],
  wasm: {
    kernel: 'gemv_q8_0',
    activations: 'q8',
    rowPairs: true,
    rows4: { kernel: 'gemv_q8_0_r4', head: 1, tail: 0, signFlip: true },
  },
  webgpu: { snippet: 'q8_0', headToTail: 2, groupBlocks: 4, fastDot32: true, hardwareRows: true, chunkDot: true },
  dequantizeRow(src: Uint8Array, dst: Float32Array, nElements: number): void {
    const nb = checkDequantizeArgs(this, src, dst, nElements);
    for (let i = 0; i < nb; i++) {
      const o = i * BLOCK_BYTES;
      const d = readF16(src, o);
      const y = i * QK;
      for (let j = 0; j < QK; j++) dst[y + j] = ((src[o + 2 + j]! << 24) >> 24) * d;
    }
  },
  quantizeRow(src: Float32Array, dst: Uint8Array): void {
    const nb = checkQuantizeArgs(this, src, dst);
    for (let i = 0; i < nb; i++) {
      const x = i * QK;
      const o = i * BLOCK_BYTES;
      let amax = 0;
      for (let j = 0; j < QK; j++) {
        const a = Math.abs(src[x + j]!);
        amax = amax > a ? amax : a; // C MAX(): NaN-order as ggml
      }
      const d = fround(amax / 127);
      const id = d !== 0 ? fround(1 / d) : 0;
      writeF16(dst, o, d);
      for (let j = 0; j < QK; j++) dst[o + 2 + j] = roundHalfAway(fround(src[x + j]! * id)) & 0xff;
    }
  },
};
