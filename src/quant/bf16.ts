/**
 * BF16: bfloat16, the top 16 bits of an f32 (ggml `GGML_TYPE_BF16`, 2 bytes per element). Dequantization shifts the
 * bits up (exact); quantization rounds to nearest-even and quietens NaNs as ggml's `ggml_fp32_to_bf16_row_ref`.
 */

import { GgmlType } from '../gguf/types.js';
import { f32ToBf16Bits } from './half.js';
import type { QuantType } from './quant-type.js';
import { checkDequantizeArgs, checkQuantizeArgs } from './row-args.js';

/** The BF16 type. */
export const bf16: QuantType = {
  id: GgmlType.BF16,
  name: 'BF16',
  blockElements: 1,
  blockBytes: 2,
  f16Scales: [],
  wasm: { kernel: 'gemv_bf16', activations: 'f32' },
  webgpu: { snippet: 'bf16', headToTail: 0, groupBlocks: 0, fastDot32: false },
  dequantizeRow(src: Uint8Array, dst: Float32Array, nElements: number): void {
    checkDequantizeArgs(this, src, dst, nElements);
    const out = new Uint32Array(dst.buffer, dst.byteOffset, nElements); // f32 bits, (nElements)
    if (src.byteOffset % 2 === 0) {
      const h = new Uint16Array(src.buffer, src.byteOffset, nElements); // bf16 bits (little-endian host)
      for (let i = 0; i < nElements; i++) out[i] = h[i]! << 16;
    } else {
      for (let i = 0, o = 0; i < nElements; i++, o += 2) out[i] = ((src[o]! << 16) | (src[o + 1]! << 24)) >>> 0;
    }
  },
  quantizeRow(src: Float32Array, dst: Uint8Array): void {
    checkQuantizeArgs(this, src, dst);
    for (let i = 0, o = 0; i < src.length; i++, o += 2) {
      const b = f32ToBf16Bits(src[i]!);
      dst[o] = b & 0xff;
      dst[o + 1] = b >>> 8;
    }
  },
};
