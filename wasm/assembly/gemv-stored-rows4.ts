/**
 * Q4_0 matvec over weights stored in 4-row groups (wasm/assembly/rows4-layout.ts), any token count: tiles of four
 * rows × 8, 4 or 1 tokens, lanes = rows. A token's block is one `i16x8.relaxed_dot_i8x16_i7x16_s` per 16-byte chunk
 * of nibbles (0…15, the i7 operand) against four activation bytes splatted to every lane (a shuffle of a 16-byte
 * load); i16 lanes 2r, 2r + 1 belong to row r, so the eight dots add in i16 (≤ 8·2·15·127 = 30480 < 2¹⁵)
 * and one pairwise widening gives [row 0 … row 3] for the block's four scales (an f32x4) — no transpose-add. The
 * weights stay in this layout, so decode (one token) and batched choices (four) use the tiles too, with no per-call
 * packing. Relaxed-SIMD builds only (the host stores this layout only where rows4_kernels() is 1); elsewhere a trap.
 */
import { gemvRows4, storeTile } from './rows4-driver';
import { f16x4ToF32x4, fmaF32x4, hiNibbles } from './simd-dot';

/** This kernel's tile for gemvRows4 (rows4-driver.ts). */
@final class Tiles {
  // @ts-ignore: decorator
  @inline run(
    wg: usize, x0: usize, xrb: usize, nb: i32, k: i32, o: usize, osb: usize, nTok: i32, masked: bool, lo: i32, hi: i32,
  ): void {
    tile(wg, x0, xrb, nb, k, o, osb, nTok, masked, lo, hi);
  }
}

/** The four f16 scales of a group's block at `pb` → f32x4. */
// @ts-ignore: decorator
@inline export function scales4(pb: usize): v128 {
  return f16x4ToF32x4(i32x4.extend_low_i16x8_u(v128.load64_zero(pb)));
}

/** acc + d·(dx·Σ q·qx − 8·s_x) for one token; l*: low nibbles of chunks 0…3, h*: high (elements 16…31). */
// @ts-ignore: decorator
@inline function q4Token(
  acc: v128, l0: v128, l1: v128, l2: v128, l3: v128, h0: v128, h1: v128, h2: v128, h3: v128,
  d: v128, xb: usize, dx: usize, sx: usize,
): v128 {
  // The block's 32 activation bytes in two loads, each 4-byte chunk splatted by a shuffle (one vpshufd): eight
  // load32_splats cost more (V8 kept an address register per offset and spilled them; Q5_0 +10–25 %).
  const xa = v128.load(xb), xc = v128.load(xb, 16);
  let s = i16x8.relaxed_dot_i8x16_i7x16_s(v128.shuffle<i32>(xa, xa, 0, 0, 0, 0), l0);
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.shuffle<i32>(xa, xa, 1, 1, 1, 1), l1));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.shuffle<i32>(xa, xa, 2, 2, 2, 2), l2));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.shuffle<i32>(xa, xa, 3, 3, 3, 3), l3));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.shuffle<i32>(xc, xc, 0, 0, 0, 0), h0));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.shuffle<i32>(xc, xc, 1, 1, 1, 1), h1));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.shuffle<i32>(xc, xc, 2, 2, 2, 2), h2));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.shuffle<i32>(xc, xc, 3, 3, 3, 3), h3));
  const q = f32x4.convert_i32x4_s(i32x4.extadd_pairwise_i16x8_s(s));
  const t = fmaF32x4(f32x4.mul(v128.load32_splat(sx), f32x4.splat(-8)), q, v128.load32_splat(dx));
  return fmaF32x4(acc, t, d);
}

/**
 * One tile: group `wg` · nTok (1, 4 or 8; a constant after inlining) tokens' Q8 rows from x0 (xrb apart) → out rows
 * o, o + osb, … (four consecutive f32 each; `masked`: only lanes lo … hi−1); each block unpacked once for all tokens.
 */
// @ts-ignore: decorator
@inline function tile(
  wg: usize, x0: usize, xrb: usize, nb: i32, k: i32, o: usize, osb: usize, nTok: i32, masked: bool, lo: i32, hi: i32,
): void {
  const mask = i8x16.splat(0x0f);
  const xd = x0 + <usize>k;
  const xs = xd + (<usize>nb << 2);
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let a4 = f32x4.splat(0), a5 = f32x4.splat(0), a6 = f32x4.splat(0), a7 = f32x4.splat(0);
  for (let b = 0; b < nb; b++) {
    const so = <usize>b << 2;
    const pb = wg + <usize>b * 72;
    const d = scales4(pb);
    const v0 = v128.load(pb, 8), v1 = v128.load(pb, 24), v2 = v128.load(pb, 40), v3 = v128.load(pb, 56);
    const l0 = v128.and(v0, mask), l1 = v128.and(v1, mask), l2 = v128.and(v2, mask), l3 = v128.and(v3, mask);
    const h0 = hiNibbles(v0, mask), h1 = hiNibbles(v1, mask), h2 = hiNibbles(v2, mask), h3 = hiNibbles(v3, mask);
    const xo = <usize>b << 5;
    a0 = q4Token(a0, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + xo, xd + so, xs + so);
    if (nTok >= 4) {
      a1 = q4Token(a1, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + xrb + xo, xd + xrb + so, xs + xrb + so);
      a2 = q4Token(a2, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + 2 * xrb + xo, xd + 2 * xrb + so, xs + 2 * xrb + so);
      a3 = q4Token(a3, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + 3 * xrb + xo, xd + 3 * xrb + so, xs + 3 * xrb + so);
    }
    if (nTok == 8) {
      a4 = q4Token(a4, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + 4 * xrb + xo, xd + 4 * xrb + so, xs + 4 * xrb + so);
      a5 = q4Token(a5, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + 5 * xrb + xo, xd + 5 * xrb + so, xs + 5 * xrb + so);
      a6 = q4Token(a6, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + 6 * xrb + xo, xd + 6 * xrb + so, xs + 6 * xrb + so);
      a7 = q4Token(a7, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + 7 * xrb + xo, xd + 7 * xrb + so, xs + 7 * xrb + so);
    }
  }
  storeTile(o, osb, nTok, masked, lo, hi, a0, a1, a2, a3, a4, a5, a6, a7);
}

/** 1 in the relaxed-SIMD builds, whose 4-row kernels run; 0 where they trap (the host then keeps row pairs). */
export function rows4_kernels(): i32 {
  return ASC_FEATURE_RELAXED_SIMD ? 1 : 0;
}

/**
 * Q4_0 weights in 4-row groups · n Q8 activation rows at x → out f32 [n, outStride], rows r0 … r1−1 (any bounds: a
 * group cut by r0 or r1 is computed whole, token by token, and only its rows inside are stored, so the thread pool's
 * chunks need not be group-aligned). Tokens go 8 at a time, then 4, then one by one.
 */
export function gemv_q4_0_r4(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  gemvRows4<Tiles>(w, x, out, k, r0, r1, n, outStride, k >> 5, <usize>(k >> 5) * 72);
}
