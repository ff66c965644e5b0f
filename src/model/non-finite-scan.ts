/**
 * `firstNonFinite`: finds a NaN or ±Inf in the raw bytes of a float tensor (F32, F16, BF16) by its exponent bits — one
 * linear pass, no decoding — so a model with broken weights fails at load naming the tensor, instead of producing
 * NaN logits later. Quantized tensors are not scanned (their scales are checked by the warmup's finite-logits test).
 */

import { GgmlType } from '../gguf/types.js';

/** Index of the first non-finite element of `bytes` read as `type`, or -1 (also -1 for types not scanned). */
export function firstNonFinite(type: GgmlType, bytes: Uint8Array): number {
  if (type === GgmlType.F32) {
    const words = view(bytes, 4, Uint32Array);
    for (let i = 0; i < words.length; i++) if ((words[i] & 0x7f800000) === 0x7f800000) return i;
  } else if (type === GgmlType.F16) {
    const halves = view(bytes, 2, Uint16Array);
    for (let i = 0; i < halves.length; i++) if ((halves[i] & 0x7c00) === 0x7c00) return i;
  } else if (type === GgmlType.BF16) {
    const halves = view(bytes, 2, Uint16Array);
    for (let i = 0; i < halves.length; i++) if ((halves[i] & 0x7f80) === 0x7f80) return i;
  }
  return -1;
}

/** `bytes` as a little-endian word array (copied only when unaligned). Hosts here are little-endian, like GGUF. */
function view<T extends Uint16Array | Uint32Array>(bytes: Uint8Array, size: number, Ctor: new (b: ArrayBufferLike, o: number, n: number) => T): T {
  const n = Math.floor(bytes.byteLength / size);
  if (bytes.byteOffset % size === 0) return new Ctor(bytes.buffer, bytes.byteOffset, n);
  const copy = bytes.slice(0, n * size);
  return new Ctor(copy.buffer, 0, n);
}
