/**
 * Q4_0 prefill over weights stored in 4-row groups (rows4-layout.ts) and activations splatted once per call
 * (splat-driver.ts): gemv_q4_0_r4's tile (gemv-stored-rows4.ts) reading each token's block from its splatted record.
 * Same dots, sums and f32 operations in the same order, so the outputs are bit-identical to gemv_q4_0_r4.
 * Relaxed-SIMD builds only (elsewhere a trap).
 */
import { storeTile } from './rows4-driver';
import { gemvSplat, X4_REC } from './splat-driver';
import { scales4 } from './gemv-stored-rows4';
import { fmaF32x4, hiNibbles } from './simd-dot';

/** This kernel's tile for gemvSplat (splat-driver.ts). */
@final class Tiles {
  // @ts-ignore: decorator
  @inline run(wg: usize, xr: usize, nb: i32, o: usize, osb: usize, nTok: i32, masked: bool, lo: i32, hi: i32): void {
    tile(wg, xr, nb, o, osb, nTok, masked, lo, hi);
  }
}

/**
 * acc + d·(dx·Σ q·qx − 8·s_x) for the token whose record is at r; l*: low nibbles of chunks 0…3, h*: high. The i16
 * sums widen by a dot with a hoisted ones vector (`i16x8.splat(1)`): the same pairwise sums as
 * extadd_pairwise_i16x8_s, for which V8 reloads its constant's address at every use (+0–6 %, within noise).
 */
// @ts-ignore: decorator
@inline function q4Token(
  acc: v128, l0: v128, l1: v128, l2: v128, l3: v128, h0: v128, h1: v128, h2: v128, h3: v128, d: v128, r: usize,
  ones: v128,
): v128 {
  let s = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(r), l0);
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(r, 16), l1));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(r, 32), l2));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(r, 48), l3));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(r, 64), h0));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(r, 80), h1));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(r, 96), h2));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(r, 112), h3));
  const q = f32x4.convert_i32x4_s(i32x4.dot_i16x8_s(s, ones));
  const t = fmaF32x4(v128.load32_splat(r, 132), q, v128.load32_splat(r, 128));
  return fmaF32x4(acc, t, d);
}

/**
 * One tile: group `wg` · nTok (1, 4 or 8; a constant after inlining) tokens whose first record is at xr (the next
 * X4_REC apart, blocks X4_BLOCK apart) → out rows o, o + osb, … (`masked`: only lanes lo … hi−1).
 */
// @ts-ignore: decorator
@inline function tile(
  wg: usize, xr: usize, nb: i32, o: usize, osb: usize, nTok: i32, masked: bool, lo: i32, hi: i32,
): void {
  const mask = i8x16.splat(0x0f);
  const ones = i16x8.splat(1);
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let a4 = f32x4.splat(0), a5 = f32x4.splat(0), a6 = f32x4.splat(0), a7 = f32x4.splat(0);
  let r = xr;
  for (let b = 0; b < nb; b++) {
    const pb = wg + <usize>b * 72;
    const d = scales4(pb);
    const v0 = v128.load(pb, 8), v1 = v128.load(pb, 24), v2 = v128.load(pb, 40), v3 = v128.load(pb, 56);
    const l0 = v128.and(v0, mask), l1 = v128.and(v1, mask), l2 = v128.and(v2, mask), l3 = v128.and(v3, mask);
    const h0 = hiNibbles(v0, mask), h1 = hiNibbles(v1, mask), h2 = hiNibbles(v2, mask), h3 = hiNibbles(v3, mask);
    a0 = q4Token(a0, l0, l1, l2, l3, h0, h1, h2, h3, d, r, ones);
    if (nTok >= 4) {
      a1 = q4Token(a1, l0, l1, l2, l3, h0, h1, h2, h3, d, r + X4_REC, ones);
      a2 = q4Token(a2, l0, l1, l2, l3, h0, h1, h2, h3, d, r + 2 * X4_REC, ones);
      a3 = q4Token(a3, l0, l1, l2, l3, h0, h1, h2, h3, d, r + 3 * X4_REC, ones);
    }
    if (nTok == 8) {
      a4 = q4Token(a4, l0, l1, l2, l3, h0, h1, h2, h3, d, r + 4 * X4_REC, ones);
      a5 = q4Token(a5, l0, l1, l2, l3, h0, h1, h2, h3, d, r + 5 * X4_REC, ones);
      a6 = q4Token(a6, l0, l1, l2, l3, h0, h1, h2, h3, d, r + 6 * X4_REC, ones);
      a7 = q4Token(a7, l0, l1, l2, l3, h0, h1, h2, h3, d, r + 7 * X4_REC, ones);
    }
    r += 8 * X4_REC;
  }
  storeTile(o, osb, nTok, masked, lo, hi, a0, a1, a2, a3, a4, a5, a6, a7);
}

/**
 * Q4_0 weights in 4-row groups · n tokens' splatted activations at x (splat_q8_x4) → out f32 [n, outStride], rows
 * r0 … r1−1 (any bounds, as gemv_q4_0_r4).
 */
export function gemv_q4_0_r4x(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  gemvSplat<Tiles>(w, x, out, k, r0, r1, n, outStride, <usize>(k >> 5) * 72);
}
