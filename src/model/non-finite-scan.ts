/**
 * `firstNonFinite`: finds a NaN or ±Inf in the raw bytes of a tensor by exponent bits — one linear pass, no decoding —
 * so a model with broken weights fails at load naming the tensor, instead of producing NaN logits later. Float
 * tensors (F32, F16, BF16) are checked element by element; block-quantized ones through the f16 scales of each block
 * (`d`, and `m`/`dmin` where the type has one: `QuantType.f16Scales`). Types outside the registry are left to the
 * warmup's finite-logits check.
 */

import { GgmlType } from '../gguf/types.js';
import { QUANT_TYPES, type QuantType } from '../quant/index.js';

/** Block geometry and f16 scale offsets of each block-quantized type scanned (from the quant registry). */
const QUANT_SCALES: ReadonlyMap<GgmlType, QuantType> = new Map(
  QUANT_TYPES.filter((t) => t.f16Scales.length > 0).map((t) => [t.id, t]),
);

/**
 * Index of the first non-finite element of `bytes` read as `type` (for quantized types: the first element of the
 * block whose scale is non-finite), or -1 (also -1 for types not scanned).
 */
export function firstNonFinite(type: GgmlType, bytes: Uint8Array): number {
  const q = QUANT_SCALES.get(type);
  if (q !== undefined) {
    // f16 exponent all ones (Inf/NaN): bits 10–14, i.e. 0x7c in the high byte (little-endian). One strided pass
    // per scale (a model load scans every block: ~20 M of them for a 0.5B Q4_0 model), then the earliest block.
    const blocks = Math.floor(bytes.byteLength / q.blockBytes);
    const end = blocks * q.blockBytes;
    const step = q.blockBytes;
    let first = blocks;
    for (const o of q.f16Scales) {
      for (let i = o + 1; i < end; i += step) {
        if ((bytes[i] & 0x7c) === 0x7c) {
          first = Math.min(first, (i - o - 1) / step);
          break;
        }
      }
    }
    return first < blocks ? first * q.blockElements : -1;
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
function view<T extends Uint16Array | Uint32Array>(
  bytes: Uint8Array,
  size: number,
  Ctor: new (b: ArrayBufferLike, o: number, n: number) => T,
): T {
  const n = Math.floor(bytes.byteLength / size);
  if (bytes.byteOffset % size === 0) return new Ctor(bytes.buffer, bytes.byteOffset, n);
  const copy = bytes.slice(0, n * size);
  return new Ctor(copy.buffer, 0, n);
}
