/**
 * `firstNonFinite`: finds a NaN or ±Inf in the raw bytes of a tensor by exponent bits — one linear pass, no decoding —
 * so a model with broken weights fails at load naming the tensor, instead of producing NaN logits later. Float
 * tensors (F32, F16, BF16) are checked element by element; block-quantized ones through the f16 scales of each block
 * (`d`, and `m`/`dmin` where the type has one; ggml-common.h layouts). Types not listed here are left to the
 * warmup's finite-logits check.
 */

import { GgmlType } from '../gguf/types.js';

/** Block size and byte offsets of the f16 scale fields of each block-quantized type scanned. */
const QUANT_SCALES: Partial<Record<GgmlType, { readonly blockBytes: number; readonly blockElements: number; readonly at: readonly number[] }>> = {
  [GgmlType.Q4_0]: { blockBytes: 18, blockElements: 32, at: [0] },
  [GgmlType.Q4_1]: { blockBytes: 20, blockElements: 32, at: [0, 2] },
  [GgmlType.Q5_0]: { blockBytes: 22, blockElements: 32, at: [0] },
  [GgmlType.Q5_1]: { blockBytes: 24, blockElements: 32, at: [0, 2] },
  [GgmlType.Q8_0]: { blockBytes: 34, blockElements: 32, at: [0] },
  [GgmlType.Q8_1]: { blockBytes: 36, blockElements: 32, at: [0, 2] },
  [GgmlType.Q2_K]: { blockBytes: 84, blockElements: 256, at: [80, 82] },
  [GgmlType.Q3_K]: { blockBytes: 110, blockElements: 256, at: [108] },
  [GgmlType.Q4_K]: { blockBytes: 144, blockElements: 256, at: [0, 2] },
  [GgmlType.Q5_K]: { blockBytes: 176, blockElements: 256, at: [0, 2] },
  [GgmlType.Q6_K]: { blockBytes: 210, blockElements: 256, at: [208] },
  [GgmlType.IQ4_NL]: { blockBytes: 18, blockElements: 32, at: [0] },
  [GgmlType.IQ4_XS]: { blockBytes: 136, blockElements: 256, at: [0] },
};

/**
 * Index of the first non-finite element of `bytes` read as `type` (for quantized types: the first element of the
 * block whose scale is non-finite), or -1 (also -1 for types not scanned).
 */
export function firstNonFinite(type: GgmlType, bytes: Uint8Array): number {
  const q = QUANT_SCALES[type];
  if (q !== undefined) {
    const blocks = Math.floor(bytes.byteLength / q.blockBytes);
    for (let b = 0, base = 0; b < blocks; b++, base += q.blockBytes) {
      // f16 exponent all ones (Inf/NaN): bits 10–14, i.e. 0x7c in the high byte (little-endian).
      for (const o of q.at) if ((bytes[base + o + 1] & 0x7c) === 0x7c) return b * q.blockElements;
    }
    return -1;
  }
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
