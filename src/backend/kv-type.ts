/**
 * The element types a KV cache can store (llama.cpp `-ctk` / `-ctv`): 'f32', 'f16', and the block types 'q8_0' and
 * 'q4_0', whose K and V rows are quantized in blocks of 32 values along the head dimension (ggml `block_q8_0` /
 * `block_q4_0` bytes). As llama.cpp's flash-attention path (which it requires for a quantized V cache), attention
 * reads dequantized V, and for a quantized K multiplies keys by q quantized to Q8_0 (K's `vec_dot_type`).
 * As llama.cpp (llama-kv-cache.cpp `attn_rot_k/v`), a quantized cache whose head size is a multiple of 64 stores K and
 * V rotated by a normalised Sylvester-Hadamard matrix H (H·H = I): q and k by H of the largest power of two dividing
 * the head size, v by H of 64, and the attention output rotated back by the latter.
 */

import { LlmError } from '../errors.js';
import { GgmlType } from '../gguf/types.js';
import { f16ToF32BitsTable, readF16, roundToF16, writeF16 } from '../quant/half.js';
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
    if (src.byteOffset % 2 === 0) {
      // Whole rows through the f16 → f32 bits table (rows start at even offsets in every cache layout).
      const bits = f16ToF32BitsTable();
      const halves = new Uint16Array(src.buffer, src.byteOffset, dst.length);
      const out = new Uint32Array(dst.buffer, dst.byteOffset, dst.length);
      for (let i = 0; i < out.length; i++) out[i] = bits[halves[i]];
    } else {
      for (let i = 0; i < dst.length; i++) dst[i] = readF16(src, 2 * i);
    }
  } else if (type === 'q8_0') {
    // block_q8_0: f16 d, then 32 int8 quants; value = q·d (the Q8_0 type's dequantizeRow, without per-value shifts).
    const q = new Int8Array(src.buffer, src.byteOffset, src.length);
    for (let o = 0, y = 0; y < dst.length; o += 34, y += 32) {
      const d = readF16(src, o);
      for (let j = 0; j < 32; j++) dst[y + j] = q[o + 2 + j] * d;
    }
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

/**
 * Sizes of the Hadamard rotations of a `type` cache whose heads are `headDim` wide, for K (and q) and for V (and the
 * attention output); 0 = none (float types, or a head size that is not a multiple of 64).
 */
export function kvRotations(type: KvType, headDim: number): { readonly k: number; readonly v: number } {
  if (!isQuantizedKv(type) || headDim % 64 !== 0) return { k: 0, v: 0 };
  let k = 64;
  while (headDim % (2 * k) === 0) k *= 2;
  return { k, v: 64 };
}

/**
 * Rotates every run of `size` values of `x` in place by the normalised Sylvester-Hadamard matrix of that size
 * (a fast Walsh-Hadamard transform, then ÷√size); `size` a power of two dividing x.length, 0 = nothing to do.
 */
export function hadamardRows(x: Float32Array, size: number): void {
  if (size === 0) return;
  const norm = 1 / Math.sqrt(size);
  for (let base = 0; base < x.length; base += size) {
    for (let h = 1; h < size; h *= 2) {
      for (let i = base; i < base + size; i += 2 * h) {
        for (let j = i; j < i + h; j++) {
          const a = x[j];
          const b = x[j + h];
          x[j] = a + b;
          x[j + h] = a - b;
        }
      }
    }
    for (let i = base; i < base + size; i++) x[i] *= norm;
  }
}
