/**
 * F16: IEEE binary16 (ggml `GGML_TYPE_F16`, 2 bytes per element). Dequantization writes the exact f32 bits
 * (subnormals, ±inf, quietened NaNs) as ggml's `ggml_fp16_to_fp32_row`; quantization rounds to nearest-even as
 * `ggml_fp32_to_fp16_row`.
 */

import { GgmlType } from '../gguf/types.js';
import { f16ToF32BitsTable, f32ToF16Bits } from './half.js';
import type { QuantType } from './quant-type.js';
import { checkDequantizeArgs, checkQuantizeArgs } from './row-args.js';

/** The F16 type. */
export const f16: QuantType = {
  id: GgmlType.F16,
  name: 'F16',
  blockElements: 1,
  blockBytes: 2,
  f16Scales: [],
  wasm: { kernel: 'gemv_f16', activations: 'f32' },
  webgpu: { snippet: 'f16', headToTail: 0, groupBlocks: 0, fastDot32: false },
  dequantizeRow(src: Uint8Array, dst: Float32Array, nElements: number): void {
    checkDequantizeArgs(this, src, dst, nElements);
    const table = f16ToF32BitsTable();
    const out = new Uint32Array(dst.buffer, dst.byteOffset, nElements); // f32 bits, (nElements)
    if (src.byteOffset % 2 === 0) {
      const h = new Uint16Array(src.buffer, src.byteOffset, nElements); // f16 bits (little-endian host)
      for (let i = 0; i < nElements; i++) out[i] = table[h[i]!]!;
    } else {
      for (let i = 0, o = 0; i < nElements; i++, o += 2) out[i] = table[src[o]! | (src[o + 1]! << 8)]!;
    }
  },
  quantizeRow(src: Float32Array, dst: Uint8Array): void {
    checkQuantizeArgs(this, src, dst);
    for (let i = 0, o = 0; i < src.length; i++, o += 2) {
      const h = f32ToF16Bits(src[i]!);
      dst[o] = h & 0xff;
      dst[o + 1] = h >>> 8;
    }
  },
};
