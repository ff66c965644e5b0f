/**
 * The element types a KV cache can store (llama.cpp `-ctk` / `-ctv`): 'f32', 'f16', and the block types 'q8_0' and
 * 'q4_0', whose K and V rows are quantized in blocks of 32 values along the head dimension (ggml `block_q8_0` /
 * `block_q4_0` bytes). As llama.cpp's flash-attention path (which it requires for a quantized V cache), attention
 * reads dequantized V, and for a quantized K multiplies keys by q quantized to Q8_0 (K's `vec_dot_type`).
 */

import { LlmError } from '../errors.js';
import { GgmlType } from '../gguf/types.js';
import { readF16, roundToF16, writeF16 } from '../quant/half.js';
import { getQuantType } from '../quant/index.js';
import type { KvLayerSpec } from './ops.js';

/** A KV cache element type. */
export type KvType = 'f32' | 'f16' | 'q8_0' | 'q4_0';

/** Every KV type, in the order of the docs. */
export const KV_TYPES: readonly KvType[] = ['f32', 'f16', 'q8_0', 'q4_0'];

/** Values per block of a KV type (1 for the float types). */
const BLOCK_ELEMENTS: Readonly<Record<KvType, number>> = { f32: 1, f16: 1, q8_0: 32, q4_0: 32 };
/** Bytes per block of a KV type. */
const BLOCK_BYTES: Readonly<Record<KvType, number>> = { f32: 4, f16: 2, q8_0: 34, q4_0: 18 };

/** True for the block-quantized KV types. */
function isQuantizedKv(type: KvType): boolean {
  return BLOCK_ELEMENTS[type] > 1;
}

/** Bytes of one K (or V) row of `cols` values stored as `type` (cols a multiple of the block size). */
export function kvRowBytes(type: KvType, cols: number): number {
  return (cols / BLOCK_ELEMENTS[type]) * BLOCK_BYTES[type];
}

/**
 * Throws `LlmError('invalid-request')` unless `type` is a KV type and every layer's head size is a multiple of its
 * block size (llama.cpp refuses a quantized cache whose blocks would straddle heads the same way).
 */
export function checkKvType(type: unknown, layers: readonly KvLayerSpec[]): asserts type is KvType {
  if (!KV_TYPES.includes(type as KvType)) {
    throw new LlmError('invalid-request', `kvType '${String(type)}' is not a KV cache type (${KV_TYPES.join(', ')})`, {
      details: { field: 'kvType', value: String(type) },
    });
  }
  const block = BLOCK_ELEMENTS[type as KvType];
  const bad = layers.findIndex((l) => l.nKvHeads > 0 && l.headDim % block !== 0);
  if (bad >= 0) {
    throw new LlmError(
      'invalid-request',
      `kvType '${String(type)}' stores blocks of ${block} values, but layer ${bad}'s head size ${layers[bad].headDim} ` +
        'is not a multiple of it; use kvType f16 or f32 for this model',
      { details: { field: 'kvType', value: String(type), layer: bad, headDim: layers[bad].headDim } },
    );
  }
}

const QUANT = { q8_0: GgmlType.Q8_0, q4_0: GgmlType.Q4_0 } as const;

/** Stores the `src.length` values of `src` into `dst` (kvRowBytes(type, src.length) bytes) as `type`. */
export function encodeKvRow(type: KvType, src: Float32Array, dst: Uint8Array): void {
  if (type === 'f32') {
    dst.set(new Uint8Array(src.buffer, src.byteOffset, src.byteLength));
  } else if (type === 'f16') {
    for (let i = 0; i < src.length; i++) writeF16(dst, 2 * i, src[i]);
  } else {
    getQuantType(QUANT[type]).quantizeRow!(src, dst);
  }
}

/** Reads `dst.length` values stored as `type` from `src` (the inverse of `encodeKvRow`, up to its rounding). */
export function decodeKvRow(type: KvType, src: Uint8Array, dst: Float32Array): void {
  if (type === 'f32') {
    new Uint8Array(dst.buffer, dst.byteOffset, dst.byteLength).set(src.subarray(0, dst.byteLength));
  } else if (type === 'f16') {
    for (let i = 0; i < dst.length; i++) dst[i] = readF16(src, 2 * i);
  } else {
    getQuantType(QUANT[type]).dequantizeRow(src, dst, dst.length);
  }
}

/**
 * What attention multiplies keys of a `kType` cache by: llama.cpp converts q to K's `vec_dot_type` before the dot —
 * f16 for an f16 K, Q8_0 for a quantized one, q itself for f32. Rounds `q` (whole rows, blocks of 32) in place.
 */
export function roundQueryForKv(kType: KvType, q: Float32Array): void {
  if (kType === 'f16') {
    for (let i = 0; i < q.length; i++) q[i] = roundToF16(q[i]);
    return;
  }
  if (!isQuantizedKv(kType)) return;
  const qt = getQuantType(GgmlType.Q8_0);
  const bytes = new Uint8Array(kvRowBytes('q8_0', q.length));
  qt.quantizeRow!(q, bytes);
  qt.dequantizeRow(bytes, q, q.length);
}
