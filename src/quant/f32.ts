/**
 * F32: plain little-endian IEEE floats (ggml `GGML_TYPE_F32`, 4 bytes per element). Dequantization is a byte copy,
 * so it is bit-exact by construction, NaN payloads included.
 */

import { GgmlType } from '../gguf/types.js';
import type { QuantType } from './quant-type.js';
import { checkDequantizeArgs, checkQuantizeArgs } from './row-args.js';

/** The F32 type. */
export const f32: QuantType = {
  id: GgmlType.F32,
  name: 'F32',
  blockElements: 1,
  blockBytes: 4,
  f16Scales: [],
  wasm: { kernel: 'gemv_f32', activations: 'f32' },
  webgpu: { snippet: 'f32', headToTail: 0, groupBlocks: 0, fastDot32: false },
  dequantizeRow(src: Uint8Array, dst: Float32Array, nElements: number): void {
    checkDequantizeArgs(this, src, dst, nElements);
    // dst bytes (nElements·4) ← src bytes; the platform is little-endian like GGUF.
    new Uint8Array(dst.buffer, dst.byteOffset, nElements * 4).set(src.subarray(0, nElements * 4));
  },
  quantizeRow(src: Float32Array, dst: Uint8Array): void {
    checkQuantizeArgs(this, src, dst);
    dst.set(new Uint8Array(src.buffer, src.byteOffset, src.length * 4));
  },
};
