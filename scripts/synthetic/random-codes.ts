/**
 * Random-code tensors for the quant types webgguf only reads (IQ1_S … IQ3_S, IQ1_M: `DEQUANTIZE_ONLY`): every
 * byte of every block is random — any grid index, sign pattern and sub-block scale is a valid code — and the block's
 * f16 scale `d` is then set so the tensor's values have the plan's standard deviation (dequantization is linear in
 * `d`). The model is still made from a seed alone, so recorded fixtures of these types need no llama.cpp to rebuild.
 */

import { GgmlType } from '../../src/gguf/types.js';
import { f32ToF16Bits } from '../../src/quant/half.js';
import { DEQUANTIZE_ONLY, getQuantType } from '../../src/quant/index.js';

/** Byte offset of IQ1_M's four u16 sub-block scales in a block, whose top nibbles hold the block's f16 scale. */
const IQ1_M_SCALES = 256 / 8 + 256 / 16;

/** The read-only types: a single f16 scale `d` leads each block, or (IQ1_M) is packed into its sub-block scales. */
export function hasRandomCodes(type: GgmlType): boolean {
  const qt = getQuantType(type);
  return DEQUANTIZE_ONLY.has(type) && (type === GgmlType.IQ1_M || (qt.f16Scales.length === 1 && qt.f16Scales[0] === 0));
}

/** Writes the f16 scale `bits` into block `b` of `bytes`. */
function writeScale(type: GgmlType, bytes: Uint8Array, blockBytes: number, b: number, bits: number): void {
  const at = b * blockBytes;
  if (type !== GgmlType.IQ1_M) {
    bytes[at] = bits & 0xff;
    bytes[at + 1] = bits >>> 8;
    return;
  }
  // ggml: scale = (sc[0] >> 12) | ((sc[1] >> 8) & 0xf0) | ((sc[2] >> 4) & 0xf00) | (sc[3] & 0xf000), sc as u16.
  for (let j = 0; j < 4; j++) {
    const hi = at + IQ1_M_SCALES + 2 * j + 1; // high byte of sc[j] (little-endian)
    bytes[hi] = (bytes[hi] & 0x0f) | (((bits >>> (4 * j)) & 0xf) << 4);
  }
}

/** Random-code bytes of `n` values of `type` (grids loaded) with standard deviation `std`; `rnd` uniform in [0, 1). */
export function randomCodeBytes(type: GgmlType, n: number, std: number, rnd: () => number): Uint8Array {
  const qt = getQuantType(type);
  const nBlocks = n / qt.blockElements;
  const bytes = new Uint8Array(nBlocks * qt.blockBytes); // [nBlocks, blockBytes]
  for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(rnd() * 256);
  const setD = (bits: number): void => {
    for (let b = 0; b < nBlocks; b++) writeScale(type, bytes, qt.blockBytes, b, bits);
  };
  setD(f32ToF16Bits(1));
  const values = new Float32Array(n); // [n] at d = 1
  qt.dequantizeRow(bytes, values, n);
  let sum = 0;
  for (const v of values) sum += v * v;
  const rms = Math.sqrt(sum / n);
  setD(f32ToF16Bits(rms > 0 ? std / rms : 1));
  return bytes;
}
