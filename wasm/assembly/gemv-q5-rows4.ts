/**
 * Q5_0 matvec over weights stored in 4-row groups (wasm/assembly/rows4-layout.ts with `q5`: 88-byte group blocks —
 * the four rows' f16 scales, then 5 chunks, chunk m = body bytes 4m … 4m + 3 of rows 0 … 3), any token count: tiles
 * of four rows × 8, 4 or 1 tokens, lanes = rows, as the Q4_0 kernel (gemv-stored-rows4.ts). The body is re-coded at
 * load (q5Encode in rows4-layout.ts) so the quants q = nibble + 16·5th bit (0…31, the relaxed dot's i7 operand) come
 * out whole: chunk m's bytes hold quant 4m + i in bits 0…4 (one mask) and the low 3 bits of quant 16 + 4m + i in bits
 * 5…7, chunk 4's bytes the top 2 bits of quants 16 + 4m + i at bits 2m, 2m + 1 (two shifts, two masks, an or): 24
 * ops a block for four rows, shared by the tile's tokens. Four dots add in i16 (≤ 4·2·31·128 = 31744 < 2¹⁵) and two
 * pairwise widenings give [row 0 … row 3]; the −16 offset comes from the activation block sums. Relaxed-SIMD builds
 * only (elsewhere a trap).
 */
import { gemvRows4, storeTile } from './rows4-driver';
import { dot4ChunksI16, fmaF32x4 } from './simd-dot';
import { scales4 } from './gemv-stored-rows4';

/** This kernel's tile for gemvRows4 (rows4-driver.ts). */
@final class Tiles {
  // @ts-ignore: decorator
  @inline run(
    wg: usize, x0: usize, xrb: usize, nb: i32, k: i32, o: usize, osb: usize, nTok: i32, masked: bool, lo: i32, hi: i32,
  ): void {
    tile(wg, x0, xrb, nb, k, o, osb, nTok, masked, lo, hi);
  }
}

/** acc + d·(dx·Σ q·qx − 16·s_x) for one token; l*: quants of elements 0…15 (chunks 0…3), h*: of 16…31. */
// @ts-ignore: decorator
@inline function q5Token(
  acc: v128, l0: v128, l1: v128, l2: v128, l3: v128, h0: v128, h1: v128, h2: v128, h3: v128,
  d: v128, xb: usize, dx: usize, sx: usize,
): v128 {
  // The block's 32 activation bytes in two loads (dot4ChunksI16 splats their chunks).
  const s = dot4ChunksI16(v128.load(xb), l0, l1, l2, l3);
  const u = dot4ChunksI16(v128.load(xb, 16), h0, h1, h2, h3);
  const q = f32x4.convert_i32x4_s(i32x4.add(i32x4.extadd_pairwise_i16x8_s(s), i32x4.extadd_pairwise_i16x8_s(u)));
  const t = fmaF32x4(f32x4.mul(v128.load32_splat(sx), f32x4.splat(-16)), q, v128.load32_splat(dx));
  return fmaF32x4(acc, t, d);
}

/**
 * One tile: group `wg` · nTok (1, 4 or 8; a constant after inlining) tokens' Q8 rows from x0 (xrb apart) → out rows
 * o, o + osb, … (see gemv-stored-rows4.ts's tile); each block's quants assembled once for all tokens.
 */
// @ts-ignore: decorator
@inline function tile(
  wg: usize, x0: usize, xrb: usize, nb: i32, k: i32, o: usize, osb: usize, nTok: i32, masked: bool, lo: i32, hi: i32,
): void {
  const m1f = i8x16.splat(0x1f);
  const m07 = i8x16.splat(0x07);
  const m18 = i8x16.splat(0x18);
  const xd = x0 + <usize>k;
  const xs = xd + (<usize>nb << 2);
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let a4 = f32x4.splat(0), a5 = f32x4.splat(0), a6 = f32x4.splat(0), a7 = f32x4.splat(0);
  for (let b = 0; b < nb; b++) {
    const so = <usize>b << 2;
    const pb = wg + <usize>b * 88;
    const d = scales4(pb);
    const v0 = v128.load(pb, 8), v1 = v128.load(pb, 24), v2 = v128.load(pb, 40), v3 = v128.load(pb, 56);
    const e = v128.load(pb, 72);
    // Quants 4m + i: bits 0…4 of chunk m's bytes; 16 + 4m + i: its bits 5…7, then bits 2m, 2m + 1 of e's bytes.
    const l0 = v128.and(v0, m1f), l1 = v128.and(v1, m1f), l2 = v128.and(v2, m1f), l3 = v128.and(v3, m1f);
    const h0 = v128.or(v128.and(i32x4.shr_u(v0, 5), m07), v128.and(i32x4.shl(e, 3), m18));
    const h1 = v128.or(v128.and(i32x4.shr_u(v1, 5), m07), v128.and(i32x4.shl(e, 1), m18));
    const h2 = v128.or(v128.and(i32x4.shr_u(v2, 5), m07), v128.and(i32x4.shr_u(e, 1), m18));
    const h3 = v128.or(v128.and(i32x4.shr_u(v3, 5), m07), v128.and(i32x4.shr_u(e, 3), m18));
    const xo = <usize>b << 5;
    a0 = q5Token(a0, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + xo, xd + so, xs + so);
    if (nTok >= 4) {
      a1 = q5Token(a1, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + xrb + xo, xd + xrb + so, xs + xrb + so);
      a2 = q5Token(a2, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + 2 * xrb + xo, xd + 2 * xrb + so, xs + 2 * xrb + so);
      a3 = q5Token(a3, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + 3 * xrb + xo, xd + 3 * xrb + so, xs + 3 * xrb + so);
    }
    if (nTok == 8) {
      a4 = q5Token(a4, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + 4 * xrb + xo, xd + 4 * xrb + so, xs + 4 * xrb + so);
      a5 = q5Token(a5, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + 5 * xrb + xo, xd + 5 * xrb + so, xs + 5 * xrb + so);
      a6 = q5Token(a6, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + 6 * xrb + xo, xd + 6 * xrb + so, xs + 6 * xrb + so);
      a7 = q5Token(a7, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + 7 * xrb + xo, xd + 7 * xrb + so, xs + 7 * xrb + so);
    }
  }
  storeTile(o, osb, nTok, masked, lo, hi, a0, a1, a2, a3, a4, a5, a6, a7);
}

/**
 * Q5_0 weights in 4-row groups · n Q8 activation rows at x → out f32 [n, outStride], rows r0 … r1−1 (any bounds, as
 * gemv_q4_0_r4). Tokens go 8 at a time, then 4, then one by one.
 */
export function gemv_q5_0_r4(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  gemvRows4<Tiles>(w, x, out, k, r0, r1, n, outStride, k >> 5, <usize>(k >> 5) * 88);
}
