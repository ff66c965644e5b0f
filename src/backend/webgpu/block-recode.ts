import { getScaleMinK4 } from '../../quant/k-quant-scales.js';

/**
 * Block re-codings done at upload for the software kernel set (registry `webgpu.softwareRecode`): a GGUF block is
 * rewritten into a form the CPU adapters decode with fewer loads and bit operations, same values. Keyed by the
 * re-coded form's name, which is also its snippet (`shaders/quant/<name>.wgsl`) and part of pipeline keys.
 */

/** One re-coding: GGUF block → `words` u32 words. */
export interface BlockRecode {
  /** Name of the re-coded form (`q6_k_i8`): its snippet and pipeline key. */
  readonly name: string;
  /** u32 words of one re-coded block (a multiple of 4, so blocks stay 16-byte aligned in every row). */
  readonly words: number;
  /** Writes the block at `src[s …]` (GGUF bytes) re-coded at `dst[d …]` (`words`·4 bytes, zero-filled). */
  recode(src: Uint8Array, s: number, dst: Uint8Array, d: number): void;
}

/**
 * Q6_K → q6_k_i8 (shaders/quant/q6_k_i8.wgsl): bytes 0–255 the quants as int8 q − 32, element e at byte e; bytes
 * 256–271 the 16 int8 sub-block scales as they are; bytes 272–273 f16 d; then zero to 288 bytes (72 words).
 * GGUF block_q6_K (210 bytes): ql[128], qh[64], scales[16], d. Element e = 128n + 32g + l (n < 2, g < 4, l < 32):
 * low 4 bits at nibble g >> 1 of ql[64n + 32(g & 1) + l], high 2 bits at bit 2g of qh[32n + l].
 */
function recodeQ6kI8(src: Uint8Array, s: number, dst: Uint8Array, d: number): void {
  for (let n = 0; n < 2; n++) {
    for (let g = 0; g < 4; g++) {
      const ql = s + 64 * n + 32 * (g & 1);
      const qh = s + 128 + 32 * n;
      const shiftLo = 4 * (g >> 1);
      const shiftHi = 2 * g;
      const e0 = d + 128 * n + 32 * g;
      for (let l = 0; l < 32; l++) {
        const q = ((src[ql + l]! >> shiftLo) & 15) | (((src[qh + l]! >> shiftHi) & 3) << 4);
        dst[e0 + l] = (q - 32) & 0xff; // int8 two's complement
      }
    }
  }
  for (let j = 0; j < 18; j++) dst[d + 256 + j] = src[s + 192 + j]!; // 16 scales, then d
}

/**
 * Q5_K → q5_k_i8 (shaders/quant/q5_k_i8.wgsl): bytes 0–255 the 5-bit quants q, element e at byte e; bytes 256–263
 * the 8 sub-block scales, 264–271 the 8 mins (6-bit values unpacked, ggml get_scale_min_k4); bytes 272–275 f16 d
 * and f16 dmin; then zero to 288 bytes (72 words). GGUF block_q5_K (176 bytes): d, dmin, scales[12], qh[32],
 * qs[128]. Element e = 64c + 32h + l: low 4 bits at nibble h of qs[32c + l], bit 4 at bit 2c + h of qh[l].
 */
function recodeQ5kI8(src: Uint8Array, s: number, dst: Uint8Array, d: number): void {
  for (let e = 0; e < 256; e++) {
    const c = e >> 6;
    const h = (e >> 5) & 1;
    const l = e & 31;
    dst[d + e] = ((src[s + 48 + 32 * c + l]! >> (4 * h)) & 15) | (((src[s + 16 + l]! >> (e >> 5)) & 1) << 4);
  }
  for (let j = 0; j < 8; j++) {
    const sm = getScaleMinK4(j, src, s + 4);
    dst[d + 256 + j] = sm & 0xff;
    dst[d + 264 + j] = sm >> 8;
  }
  for (let j = 0; j < 4; j++) dst[d + 272 + j] = src[s + j]!; // d, dmin
}

/** Every re-coding, by the registry's `softwareRecode` name. */
export const BLOCK_RECODES: Readonly<Record<'q6_k_i8' | 'q5_k_i8', BlockRecode>> = {
  q6_k_i8: { name: 'q6_k_i8', words: 72, recode: recodeQ6kI8 },
  q5_k_i8: { name: 'q5_k_i8', words: 72, recode: recodeQ5kI8 },
};
