/**
 * Block re-codings done at upload for the software kernel set (registry `webgpu.softwareRecode`): a GGUF block is
 * rewritten into a form the CPU adapters decode with fewer loads and bit operations, same values. Keyed by the
 * re-coded form's name, which is also its snippet (`shaders/quant/<name>.wgsl`) and part of pipeline keys. The
 * re-codings work on whole 32-bit words (four quants at a time): a model's Q6_K head is ~10⁶ blocks.
 */

import { getScaleMinK4 } from '../../quant/k-quant-scales.js';

/** One re-coding: GGUF blocks → `words` u32 words each. */
export interface BlockRecode {
  /** Name of the re-coded form (`q6_k_i8`): its snippet and pipeline key. */
  readonly name: string;
  /** u32 words of one re-coded block (a multiple of 4, so blocks stay 16-byte aligned in every row). */
  readonly words: number;
  /** Writes the `nBlocks` GGUF blocks of `src` re-coded into `dst` (nBlocks·words·4 bytes, zero-filled). */
  recode(src: Uint8Array, dst: Uint8Array, nBlocks: number): void;
}

const Q6K_BYTES = 210;
const Q5K_BYTES = 176;
const RECODED_BYTES = 288; // 72 words

/**
 * Q6_K → q6_k_i8 (shaders/quant/q6_k_i8.wgsl): bytes 0–255 the quants as int8 q − 32, element e at byte e; bytes
 * 256–271 the 16 int8 sub-block scales as they are; bytes 272–273 f16 d; then zero to 288 bytes (72 words).
 * GGUF block_q6_K (210 bytes): ql[128], qh[64], scales[16], d. Element e = 128n + 32g + l (n < 2, g < 4, l < 32):
 * low 4 bits at nibble g >> 1 of ql[64n + 32(g & 1) + l], high 2 bits at bit 2g of qh[32n + l].
 */
function recodeQ6kI8(src: Uint8Array, dst: Uint8Array, nBlocks: number): void {
  const sv = new DataView(src.buffer, src.byteOffset, src.byteLength);
  const dv = new DataView(dst.buffer, dst.byteOffset, dst.byteLength);
  for (let b = 0; b < nBlocks; b++) {
    const s = b * Q6K_BYTES;
    const d = b * RECODED_BYTES;
    for (let n = 0; n < 2; n++) {
      for (let g = 0; g < 4; g++) {
        const ql = s + 64 * n + 32 * (g & 1);
        const qh = s + 128 + 32 * n;
        const shiftLo = 4 * (g >> 1);
        const shiftHi = 2 * g;
        const o = d + 128 * n + 32 * g;
        for (let j = 0; j < 32; j += 4) {
          // four 6-bit quants, one per byte; ^ 0x20 makes each q − 32 in 6-bit two's complement, then bit 5 (the
          // sign) is copied into bits 6 and 7: int8 q − 32
          const q =
            ((sv.getUint32(ql + j, true) >>> shiftLo) & 0x0f0f0f0f) |
            (((sv.getUint32(qh + j, true) >>> shiftHi) & 0x03030303) << 4);
          const x = q ^ 0x20202020;
          const sign = x & 0x20202020;
          dv.setUint32(o + j, x | (sign << 1) | (sign << 2), true);
        }
      }
    }
    for (let j = 0; j < 18; j++) dst[d + 256 + j] = src[s + 192 + j]!; // 16 scales, then d
  }
}

/**
 * Q5_K → q5_k_i8 (shaders/quant/q5_k_i8.wgsl): bytes 0–255 the 5-bit quants q, element e at byte e; bytes 256–263
 * the 8 sub-block scales, 264–271 the 8 mins (6-bit values unpacked, ggml get_scale_min_k4); bytes 272–275 f16 d
 * and f16 dmin; then zero to 288 bytes (72 words). GGUF block_q5_K (176 bytes): d, dmin, scales[12], qh[32],
 * qs[128]. Element e = 64c + 32h + l: low 4 bits at nibble h of qs[32c + l], bit 4 at bit 2c + h of qh[l].
 */
function recodeQ5kI8(src: Uint8Array, dst: Uint8Array, nBlocks: number): void {
  const sv = new DataView(src.buffer, src.byteOffset, src.byteLength);
  const dv = new DataView(dst.buffer, dst.byteOffset, dst.byteLength);
  for (let b = 0; b < nBlocks; b++) {
    const s = b * Q5K_BYTES;
    const d = b * RECODED_BYTES;
    for (let sub = 0; sub < 8; sub++) {
      const qs = s + 48 + 32 * (sub >> 1);
      const shiftLo = 4 * (sub & 1);
      for (let j = 0; j < 32; j += 4) {
        const q =
          ((sv.getUint32(qs + j, true) >>> shiftLo) & 0x0f0f0f0f) |
          (((sv.getUint32(s + 16 + j, true) >>> sub) & 0x01010101) << 4);
        dv.setUint32(d + 32 * sub + j, q, true);
      }
      const sm = getScaleMinK4(sub, src, s + 4);
      dst[d + 256 + sub] = sm & 0xff;
      dst[d + 264 + sub] = sm >> 8;
    }
    for (let j = 0; j < 4; j++) dst[d + 272 + j] = src[s + j]!; // d, dmin
  }
}

/** Every re-coding, by the registry's `softwareRecode` name. */
export const BLOCK_RECODES: Readonly<Record<'q6_k_i8' | 'q5_k_i8', BlockRecode>> = {
  q6_k_i8: { name: 'q6_k_i8', words: RECODED_BYTES / 4, recode: recodeQ6kI8 },
  q5_k_i8: { name: 'q5_k_i8', words: RECODED_BYTES / 4, recode: recodeQ5kI8 },
};
