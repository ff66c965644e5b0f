/**
 * Weight bytes of any registry type for the backend tests: the type's reference quantizer where it has one, else
 * (the dequantize-only IQ1–IQ3 types, `DEQUANTIZE_ONLY`) random blocks — every bit pattern of their codebook indices,
 * signs and sub-scales is a valid block — with the super-block scale set to a small finite f16 so the values stay
 * O(1): at the record's `f16Scales` offsets, or IQ1_M's scale packed in the top nibbles of its four scale words.
 */

import { GgmlType } from '../../src/gguf/types.js';
import { f32ToF16Bits } from '../../src/quant/half.js';
import type { QuantType } from '../../src/quant/index.js';
import { mulberry32 } from './mulberry32.js';

/** Blocks of `qt` for `values` (whole blocks): `quantizeRow(values)`, or random valid blocks drawn from `seed`. */
export function quantWeightBytes(qt: QuantType, values: Float32Array, seed: number): Uint8Array {
  const nBlocks = values.length / qt.blockElements;
  const bytes = new Uint8Array(nBlocks * qt.blockBytes); // (nBlocks, blockBytes)
  if (qt.quantizeRow) {
    qt.quantizeRow(values, bytes);
    return bytes;
  }
  const r = mulberry32(seed);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (r() * 256) | 0;
  for (let b = 0; b < nBlocks; b++) {
    const h = f32ToF16Bits((r() < 0.3 ? -1 : 1) * 2 ** (-8 + 2 * r()));
    const o = b * qt.blockBytes;
    for (const f of qt.f16Scales) {
      bytes[o + f] = h & 0xff;
      bytes[o + f + 1] = h >> 8;
    }
    if (qt.id === GgmlType.IQ1_M) {
      for (let s = 0; s < 4; s++)
        bytes[o + 49 + 2 * s] = (bytes[o + 49 + 2 * s]! & 0x0f) | (((h >> (4 * s)) & 0xf) << 4);
    }
  }
  return bytes;
}
