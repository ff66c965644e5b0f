/**
 * Q8_0 matvec over weights stored in 4-row groups (wasm/assembly/rows4-layout.ts: 136-byte group blocks, the four
 * rows' f16 scales then 8 chunks, chunk j = quant bytes 4j … 4j + 3 of rows 0 … 3), any token count: tiles of four
 * rows × 8, 4 or 1 tokens, lanes = rows, as the Q4_0 kernel (gemv-stored-rows4.ts). A signed quant w cannot be the
 * relaxed dot's 0…127 operand, so the layout stores each as u = w + 128 = 16·H + L (its sign bit flipped at load,
 * `interleave_rows4`'s flip), whose nibbles H, L are 0…15: Σ w·x = 16·Σ H·x + Σ L·x − 128·Σ x, the last term from
 * the activation block's d·Σ qs. Both nibble dots of a chunk use the same four activation bytes splatted to every lane, so a block costs
 * 16 relaxed dots, 8 splat loads and two i16 sums (each ≤ 8·2·15·127 = 30480 < 2¹⁵) per token; the nibbles are
 * split once per block for all tokens of a tile. Relaxed-SIMD builds only (elsewhere a trap).
 */
import { gemvRows4, storeTile } from './rows4-driver';
import { fmaF32x4, hiNibbles, USE_DOT_ADD } from './simd-dot';
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

/**
 * acc + d·(dx·(16·Σ H·x + Σ L·x) − 128·s_x) for one token; l*, h*: the block's 8 chunks' low and high nibbles (in the
 * relaxed-dot build l* are the whole stored bytes and the step is q8TokenDot's).
 */
// @ts-ignore: decorator
@inline function q8Token(
  acc: v128, l0: v128, l1: v128, l2: v128, l3: v128, l4: v128, l5: v128, l6: v128, l7: v128,
  h0: v128, h1: v128, h2: v128, h3: v128, h4: v128, h5: v128, h6: v128, h7: v128,
  d: v128, xb: usize, dx: usize, sx: usize,
): v128 {
  if (USE_DOT_ADD) return q8TokenDot(acc, l0, l1, l2, l3, l4, l5, l6, l7, d, xb, dx, sx);
  // Immediate load offsets (not `xb + 4`): V8 folds them into the address, an i32.add it cannot.
  let x = v128.load32_splat(xb);
  let sl = i16x8.relaxed_dot_i8x16_i7x16_s(x, l0);
  let sh = i16x8.relaxed_dot_i8x16_i7x16_s(x, h0);
  x = v128.load32_splat(xb, 4);
  sl = i16x8.add(sl, i16x8.relaxed_dot_i8x16_i7x16_s(x, l1));
  sh = i16x8.add(sh, i16x8.relaxed_dot_i8x16_i7x16_s(x, h1));
  x = v128.load32_splat(xb, 8);
  sl = i16x8.add(sl, i16x8.relaxed_dot_i8x16_i7x16_s(x, l2));
  sh = i16x8.add(sh, i16x8.relaxed_dot_i8x16_i7x16_s(x, h2));
  x = v128.load32_splat(xb, 12);
  sl = i16x8.add(sl, i16x8.relaxed_dot_i8x16_i7x16_s(x, l3));
  sh = i16x8.add(sh, i16x8.relaxed_dot_i8x16_i7x16_s(x, h3));
  x = v128.load32_splat(xb, 16);
  sl = i16x8.add(sl, i16x8.relaxed_dot_i8x16_i7x16_s(x, l4));
  sh = i16x8.add(sh, i16x8.relaxed_dot_i8x16_i7x16_s(x, h4));
  x = v128.load32_splat(xb, 20);
  sl = i16x8.add(sl, i16x8.relaxed_dot_i8x16_i7x16_s(x, l5));
  sh = i16x8.add(sh, i16x8.relaxed_dot_i8x16_i7x16_s(x, h5));
  x = v128.load32_splat(xb, 24);
  sl = i16x8.add(sl, i16x8.relaxed_dot_i8x16_i7x16_s(x, l6));
  sh = i16x8.add(sh, i16x8.relaxed_dot_i8x16_i7x16_s(x, h6));
  x = v128.load32_splat(xb, 28);
  sl = i16x8.add(sl, i16x8.relaxed_dot_i8x16_i7x16_s(x, l7));
  sh = i16x8.add(sh, i16x8.relaxed_dot_i8x16_i7x16_s(x, h7));
  const qi = i32x4.add(i32x4.shl(i32x4.extadd_pairwise_i16x8_s(sh), 4), i32x4.extadd_pairwise_i16x8_s(sl));
  const t = fmaF32x4(f32x4.mul(v128.load32_splat(sx), f32x4.splat(-128)), f32x4.convert_i32x4_s(qi), v128.load32_splat(dx));
  return fmaF32x4(acc, t, d);
}

/** The low nibbles of `v`, or in the relaxed-dot build all of `v` (q8TokenDot's operand). */
// @ts-ignore: decorator
@inline function lowOrAll(v: v128, mask: v128): v128 {
  return USE_DOT_ADD ? v : v128.and(v, mask);
}

/**
 * The relaxed-dot build's token step (simd-dot.ts USE_DOT_ADD: loaded only where the dot-add is x86's `vpdpbusd`,
 * whose second operand is an unsigned byte — exact for u = w + 128 in 0…255, so no nibble planes): Σ u·x in eight
 * dot-adds, two chains of four. The same integer as q8Token's 16·Σ H·x + Σ L·x, then the same f32 operations.
 */
// @ts-ignore: decorator
@inline function q8TokenDot(
  acc: v128, u0: v128, u1: v128, u2: v128, u3: v128, u4: v128, u5: v128, u6: v128, u7: v128,
  d: v128, xb: usize, dx: usize, sx: usize,
): v128 {
  let s0 = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load32_splat(xb), u0, i32x4.splat(0));
  let s1 = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load32_splat(xb, 16), u4, i32x4.splat(0));
  s0 = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load32_splat(xb, 4), u1, s0);
  s1 = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load32_splat(xb, 20), u5, s1);
  s0 = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load32_splat(xb, 8), u2, s0);
  s1 = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load32_splat(xb, 24), u6, s1);
  s0 = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load32_splat(xb, 12), u3, s0);
  s1 = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load32_splat(xb, 28), u7, s1);
  const qi = i32x4.add(s0, s1);
  const t = fmaF32x4(f32x4.mul(v128.load32_splat(sx), f32x4.splat(-128)), f32x4.convert_i32x4_s(qi), v128.load32_splat(dx));
  return fmaF32x4(acc, t, d);
}

/**
 * One tile: group `wg` · nTok (1, 4 or 8; a constant after inlining) tokens' Q8 rows from x0 (xrb apart) → out rows
 * o, o + osb, … (see gemv-stored-rows4.ts's tile).
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
    const pb = wg + <usize>b * 136;
    const d = scales4(pb);
    const v0 = v128.load(pb, 8), v1 = v128.load(pb, 24), v2 = v128.load(pb, 40), v3 = v128.load(pb, 56);
    const v4 = v128.load(pb, 72), v5 = v128.load(pb, 88), v6 = v128.load(pb, 104), v7 = v128.load(pb, 120);
    // The relaxed-dot build passes the stored bytes whole (q8Token); its unused high nibbles fold away.
    const l0 = lowOrAll(v0, mask), l1 = lowOrAll(v1, mask), l2 = lowOrAll(v2, mask), l3 = lowOrAll(v3, mask);
    const l4 = lowOrAll(v4, mask), l5 = lowOrAll(v5, mask), l6 = lowOrAll(v6, mask), l7 = lowOrAll(v7, mask);
    const h0 = hiNibbles(v0, mask), h1 = hiNibbles(v1, mask), h2 = hiNibbles(v2, mask), h3 = hiNibbles(v3, mask);
    const h4 = hiNibbles(v4, mask), h5 = hiNibbles(v5, mask), h6 = hiNibbles(v6, mask), h7 = hiNibbles(v7, mask);
    const xo = <usize>b << 5;
    a0 = q8Token(a0, l0, l1, l2, l3, l4, l5, l6, l7, h0, h1, h2, h3, h4, h5, h6, h7, d, x0 + xo, xd + so, xs + so);
    if (nTok >= 4) {
      a1 = q8Token(a1, l0, l1, l2, l3, l4, l5, l6, l7, h0, h1, h2, h3, h4, h5, h6, h7, d, x0 + xrb + xo, xd + xrb + so, xs + xrb + so);
      a2 = q8Token(a2, l0, l1, l2, l3, l4, l5, l6, l7, h0, h1, h2, h3, h4, h5, h6, h7, d, x0 + 2 * xrb + xo, xd + 2 * xrb + so, xs + 2 * xrb + so);
      a3 = q8Token(a3, l0, l1, l2, l3, l4, l5, l6, l7, h0, h1, h2, h3, h4, h5, h6, h7, d, x0 + 3 * xrb + xo, xd + 3 * xrb + so, xs + 3 * xrb + so);
    }
    if (nTok == 8) {
      a4 = q8Token(a4, l0, l1, l2, l3, l4, l5, l6, l7, h0, h1, h2, h3, h4, h5, h6, h7, d, x0 + 4 * xrb + xo, xd + 4 * xrb + so, xs + 4 * xrb + so);
      a5 = q8Token(a5, l0, l1, l2, l3, l4, l5, l6, l7, h0, h1, h2, h3, h4, h5, h6, h7, d, x0 + 5 * xrb + xo, xd + 5 * xrb + so, xs + 5 * xrb + so);
      a6 = q8Token(a6, l0, l1, l2, l3, l4, l5, l6, l7, h0, h1, h2, h3, h4, h5, h6, h7, d, x0 + 6 * xrb + xo, xd + 6 * xrb + so, xs + 6 * xrb + so);
      a7 = q8Token(a7, l0, l1, l2, l3, l4, l5, l6, l7, h0, h1, h2, h3, h4, h5, h6, h7, d, x0 + 7 * xrb + xo, xd + 7 * xrb + so, xs + 7 * xrb + so);
    }
  }
  storeTile(o, osb, nTok, masked, lo, hi, a0, a1, a2, a3, a4, a5, a6, a7);
}

/**
 * Q8_0 weights in 4-row groups · n Q8 activation rows at x → out f32 [n, outStride], rows r0 … r1−1 (any bounds, as
 * gemv_q4_0_r4). Tokens go 8 at a time, then 4, then one by one.
 */
export function gemv_q8_0_r4(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  gemvRows4<Tiles>(w, x, out, k, r0, r1, n, outStride, k >> 5, <usize>(k >> 5) * 136);
}
