/**
 * Q6_K matvec over weights stored in 4-row groups (wasm/assembly/rows4-layout.ts with recode 2: 840-byte group
 * super-blocks — the four rows' f16 d, then 52 chunks, chunk j = body word j of rows 0 … 3), any token count: tiles
 * of four rows × 8, 4 or 1 tokens, lanes = rows. The body is re-coded at load (q6Encode): activation block b's quants
 * are chunks 6b … 6b + 5, three per 16-quant half s — chunk 3s + k holds quants 16s + 4k + i in bits 0…5 and bits
 * 2k, 2k + 1 of quant 16s + 12 + i in bits 6, 7 — so three chunks of four quants × four rows (0…63, the relaxed dot's
 * i7 operand) cost one mask each and the fourth three shifts, three masks and two ors, shared by the tile's tokens
 * (the nibble + 2-bit-field coding before it cost 17 ops per four chunks instead of 11: one token 11.4 → 12.9
 * GB/CPU-s). Two dots add in i16
 * (≤ 2·2·63·128 = 32256 < 2¹⁵); one `i32x4.dot_i16x8_s` against the four rows' 16-element sub-block scales (i16
 * pairs) widens and scales them at once, and the −32 offset is 2·sc·Σ x from the same instruction on the
 * activation half-block sums (isum16). Scales are the words 48 … 51 of the body, as in the GGUF block. Relaxed-SIMD
 * builds only (elsewhere a trap).
 */
import { gemvRows4, storeTile } from './rows4-driver';
import { fmaF32x4 } from './simd-dot';
import { kScales4 } from './f16-scales';
import { tokenQ6K } from './gemv-q6-k-rows4-token';

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
 * acc + d·dx·(Σ_sub sc·Σ q·x − 32·sc·hs) for one token's activation block: w0 … w7 its eight chunks of quants, sa / sb
 * the rows' scales of its two 16-element sub-blocks as i16 pairs.
 */
// @ts-ignore: decorator
@inline function q6Token(
  acc: v128, w0: v128, w1: v128, w2: v128, w3: v128, w4: v128, w5: v128, w6: v128, w7: v128,
  sa: v128, sb: v128, d: v128, xb: usize, dx: usize, hs: usize,
): v128 {
  // The block's 32 activation bytes in two loads, each 4-byte chunk splatted by a shuffle (one vpshufd): eight
  // load32_splats cost more (V8 kept an address register per offset and spilled them; Q5_0 +10–25 %).
  const xa = v128.load(xb), xc = v128.load(xb, 16);
  const s0 = i16x8.add(
    i16x8.relaxed_dot_i8x16_i7x16_s(v128.shuffle<i32>(xa, xa, 0, 0, 0, 0), w0),
    i16x8.relaxed_dot_i8x16_i7x16_s(v128.shuffle<i32>(xa, xa, 1, 1, 1, 1), w1),
  );
  const s1 = i16x8.add(
    i16x8.relaxed_dot_i8x16_i7x16_s(v128.shuffle<i32>(xa, xa, 2, 2, 2, 2), w2),
    i16x8.relaxed_dot_i8x16_i7x16_s(v128.shuffle<i32>(xa, xa, 3, 3, 3, 3), w3),
  );
  const s2 = i16x8.add(
    i16x8.relaxed_dot_i8x16_i7x16_s(v128.shuffle<i32>(xc, xc, 0, 0, 0, 0), w4),
    i16x8.relaxed_dot_i8x16_i7x16_s(v128.shuffle<i32>(xc, xc, 1, 1, 1, 1), w5),
  );
  const s3 = i16x8.add(
    i16x8.relaxed_dot_i8x16_i7x16_s(v128.shuffle<i32>(xc, xc, 2, 2, 2, 2), w6),
    i16x8.relaxed_dot_i8x16_i7x16_s(v128.shuffle<i32>(xc, xc, 3, 3, 3, 3), w7),
  );
  let v = i32x4.add(i32x4.dot_i16x8_s(s0, sa), i32x4.dot_i16x8_s(s1, sa));
  v = i32x4.add(v, i32x4.add(i32x4.dot_i16x8_s(s2, sb), i32x4.dot_i16x8_s(s3, sb)));
  // |Σ x| over 16 lanes ≤ 2048 fits the low i16 of each isum16; dot with [sc, sc] pairs gives 2·sc·Σ x.
  const o = i32x4.add(i32x4.dot_i16x8_s(sa, v128.load16_splat(hs)), i32x4.dot_i16x8_s(sb, v128.load16_splat(hs, 4)));
  v = i32x4.sub(v, i32x4.shl(o, 4));
  return fmaF32x4(acc, f32x4.convert_i32x4_s(v), f32x4.mul(d, v128.load32_splat(dx)));
}

/** Quants 12 … 15 of a half block from the top two bits of its three chunks (16-bit shifts: masks keep bytes apart). */
// @ts-ignore: decorator
@inline function fourth(c0: v128, c1: v128, c2: v128): v128 {
  const lo = v128.or(v128.and(i16x8.shr_u(c0, 6), i8x16.splat(0x03)), v128.and(i16x8.shr_u(c1, 4), i8x16.splat(0x0c)));
  return v128.or(lo, v128.and(i16x8.shr_u(c2, 2), i8x16.splat(0x30)));
}

/**
 * One tile: group `wg` · nTok (1, 4 or 8; a constant after inlining) tokens' Q8 rows from x0 (xrb apart) → out rows o,
 * o + osb, … (see gemv-stored-rows4.ts's tile). One flat loop over activation blocks (nested loops make V8 spill).
 */
// @ts-ignore: decorator
@inline function tile(
  wg: usize, x0: usize, xrb: usize, nb: i32, k: i32, o: usize, osb: usize, nTok: i32, masked: bool, lo: i32, hi: i32,
): void {
  const m6 = i8x16.splat(0x3f);
  const xd = x0 + <usize>k;
  const xh = xd + (<usize>nb << 3);
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let a4 = f32x4.splat(0), a5 = f32x4.splat(0), a6 = f32x4.splat(0), a7 = f32x4.splat(0);
  let d = f32x4.splat(0);
  for (let bi = 0; bi < nb; bi++) {
    const sb = wg + <usize>(bi >> 3) * 840; // the group super-block
    const bl = bi & 7;
    if (bl == 0) d = kScales4(sb); // a branch every eighth block: cheaper than converting d every time
    const cb = sb + 8 + <usize>bl * 96;
    const c0 = v128.load(cb), c1 = v128.load(cb, 16), c2 = v128.load(cb, 32);
    const c3 = v128.load(cb, 48), c4 = v128.load(cb, 64), c5 = v128.load(cb, 80);
    const w0 = v128.and(c0, m6), w1 = v128.and(c1, m6), w2 = v128.and(c2, m6), w3 = fourth(c0, c1, c2);
    const w4 = v128.and(c3, m6), w5 = v128.and(c4, m6), w6 = v128.and(c5, m6), w7 = fourth(c3, c4, c5);
    // Sub-blocks 2·bl and 2·bl + 1: bytes p, p + 1 of each row's lane in scale chunk 48 + bl / 2.
    const sc = v128.load(sb + 8 + 768 + (<usize>(bl >> 1) << 4));
    const odd = (bl & 1) != 0;
    const ia = select<v128>(i8x16(2, 2, 6, 6, 10, 10, 14, 14, 2, 2, 6, 6, 10, 10, 14, 14), i8x16(0, 0, 4, 4, 8, 8, 12, 12, 0, 0, 4, 4, 8, 8, 12, 12), odd);
    const ib = select<v128>(i8x16(3, 3, 7, 7, 11, 11, 15, 15, 3, 3, 7, 7, 11, 11, 15, 15), i8x16(1, 1, 5, 5, 9, 9, 13, 13, 1, 1, 5, 5, 9, 9, 13, 13), odd);
    const sa = i16x8.extend_low_i8x16_s(i8x16.swizzle(sc, ia));
    const sbv = i16x8.extend_low_i8x16_s(i8x16.swizzle(sc, ib));
    const xo = <usize>bi << 5;
    const so = <usize>bi << 2;
    const ho = <usize>bi << 3;
    a0 = q6Token(a0, w0, w1, w2, w3, w4, w5, w6, w7, sa, sbv, d, x0 + xo, xd + so, xh + ho);
    if (nTok >= 4) {
      a1 = q6Token(a1, w0, w1, w2, w3, w4, w5, w6, w7, sa, sbv, d, x0 + xrb + xo, xd + xrb + so, xh + xrb + ho);
      a2 = q6Token(a2, w0, w1, w2, w3, w4, w5, w6, w7, sa, sbv, d, x0 + 2 * xrb + xo, xd + 2 * xrb + so, xh + 2 * xrb + ho);
      a3 = q6Token(a3, w0, w1, w2, w3, w4, w5, w6, w7, sa, sbv, d, x0 + 3 * xrb + xo, xd + 3 * xrb + so, xh + 3 * xrb + ho);
    }
    if (nTok == 8) {
      a4 = q6Token(a4, w0, w1, w2, w3, w4, w5, w6, w7, sa, sbv, d, x0 + 4 * xrb + xo, xd + 4 * xrb + so, xh + 4 * xrb + ho);
      a5 = q6Token(a5, w0, w1, w2, w3, w4, w5, w6, w7, sa, sbv, d, x0 + 5 * xrb + xo, xd + 5 * xrb + so, xh + 5 * xrb + ho);
      a6 = q6Token(a6, w0, w1, w2, w3, w4, w5, w6, w7, sa, sbv, d, x0 + 6 * xrb + xo, xd + 6 * xrb + so, xh + 6 * xrb + ho);
      a7 = q6Token(a7, w0, w1, w2, w3, w4, w5, w6, w7, sa, sbv, d, x0 + 7 * xrb + xo, xd + 7 * xrb + so, xh + 7 * xrb + ho);
    }
  }
  storeTile(o, osb, nTok, masked, lo, hi, a0, a1, a2, a3, a4, a5, a6, a7);
}

/**
 * Q6_K weights in 4-row groups · n Q8 activation rows at x → out f32 [n, outStride], rows r0 … r1−1 (any bounds, as
 * gemv_q4_0_r4; k % 256 == 0). Tokens go 8 at a time, then 4, then one by one.
 */
export function gemv_q6_k_r4(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  if (n == 1 && ((r0 | r1) & 3) == 0) tokenGroups(w, x, out, k, r0 >> 2, r1 >> 2);
  else gemvRows4<Tiles>(w, x, out, k, r0, r1, n, outStride, k >> 5, <usize>(k >> 8) * 840);
}

/**
 * Decode's case, whole groups g0 … g1−1, in a function of its own (see gemv-q4-k-rows4.ts's tokenGroups) with a tile
 * of its own that keeps fewer constants live (gemv-q6-k-rows4-token.ts; bit-identical to `tile`'s one token).
 */
function tokenGroups(w: usize, x: usize, out: usize, k: i32, g0: i32, g1: i32): void {
  if (!ASC_FEATURE_RELAXED_SIMD) {
    unreachable();
    return;
  }
  const gb = <usize>(k >> 8) * 840;
  for (let g = g0; g < g1; g++) tokenQ6K(w + <usize>g * gb, x, k >> 5, k, out + (<usize>g << 4));
}
