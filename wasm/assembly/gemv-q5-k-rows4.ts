/**
 * Q5_K matvec over weights stored in 4-row groups (rows4-layout.ts: head 2 — d, dmin — then 43 body words, re-coded
 * at load by q5kEncode), any token count, lanes = rows. A group's super-block (704 bytes) is
 *   +0  d of rows 0…3 (f16×4)      +8  dmin of rows 0…3 (f16×4)
 *   +16, +32, +48  scale words u0, u1, u2 (ggml's `scales[12]`) of rows 0…3, as Q4_K's (gemv-q4-k-rows4.ts)
 *   +64 + 160c + 16m  (m < 8) sub-block pair c's quants l = 4m … 4m + 3 of rows 0…3: a_l | (b_l & 7) << 5
 *   +64 + 160c + 128 + 16t  the top two bits of b_{16t+4m+i} at bits 2m of byte i
 * (a: sub-block 2c, b: 2c + 1, 5-bit quants). A token's sub-block pair per iteration, as the Q4_K one-token tile
 * (gemv-q4-k-rows4-token.ts): a chunk's a's are one mask, its b's two shifts (constant: the chunk index is), two
 * masks and an or; the relaxed dots against four splatted activation bytes add in i16 four at a time
 * (≤ 4·2·31·127 = 31496 < 2¹⁵), widened twice per sub-block; then acc + mn·s_x + q·(sc·d·d_x) per sub-block. Each
 * chunk is loaded once for its a's and b's, written out (helpers per sub-block, which reloaded it: 0.9×).
 * Several tokens (tiles of 8 and 4, see `tile`) take one sub-block per iteration instead, its eight chunks shared by
 * all tokens, with the same per-sub-block arithmetic and order: bit-identical to the one-token tile. Relaxed-SIMD
 * builds only.
 */
import { laneByte, laneByteAt, sixBitBytes } from './gemv-q4-k-rows4-token';
import { gemvRows4, storeRows, storeTile } from './rows4-driver';
import { kScales4 } from './f16-scales';
import { fmaF32x4 } from './simd-dot';

/** Bytes of one group's super-block (4 × block_q5_K). */
const GROUP_BLOCK: usize = 704;

/** One token · group `wg` (nbk super-blocks) with its Q8 row at x0 (k: the row length) → f32x4 of rows 0…3. */
// @ts-ignore: decorator
@inline function tokenQ5K(wg: usize, x0: usize, nbk: i32, k: i32): v128 {
  const xd = x0 + <usize>k;
  const xs = xd + (<usize>k >> 3);
  let acc = f32x4.splat(0);
  let d = f32x4.splat(0), nm = f32x4.splat(0), sb = f32x4.splat(0), mb = f32x4.splat(0);
  for (let c = 0; c < nbk << 2; c++) {
    const pg = wg + <usize>(c >> 2) * GROUP_BLOCK;
    if ((c & 1) == 0) {
      // A new half super-block: sub-blocks 4h … 4h + 3; when h = 0 a new super-block, its d and −dmin.
      if ((c & 3) == 0) {
        d = kScales4(pg);
        nm = f32x4.neg(kScales4(pg + 8));
      }
      sb = sixBitBytes(pg, (c >> 1) & 1, false);
      mb = sixBitBytes(pg, (c >> 1) & 1, true);
    }
    const qa = pg + 64 + <usize>(c & 3) * 160;
    const xb = x0 + (<usize>c << 6);
    // The pair's elements l < 16, then l ≥ 16: i16 sums of four dots each; each chunk loaded once for a's and b's.
    const m5 = i8x16.splat(0x1f), m3 = i8x16.splat(7), m18 = i8x16.splat(0x18);
    let t = v128.load(qa, 128);
    let v = v128.load(qa);
    let lo = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb), v128.and(v, m5));
    let hi = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 32), v128.or(v128.and(i16x8.shr_u(v, 5), m3), v128.and(i16x8.shl(t, 3), m18)));
    v = v128.load(qa, 16);
    lo = i16x8.add(lo, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 4), v128.and(v, m5)));
    hi = i16x8.add(hi, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 36), v128.or(v128.and(i16x8.shr_u(v, 5), m3), v128.and(i16x8.shl(t, 1), m18))));
    v = v128.load(qa, 32);
    lo = i16x8.add(lo, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 8), v128.and(v, m5)));
    hi = i16x8.add(hi, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 40), v128.or(v128.and(i16x8.shr_u(v, 5), m3), v128.and(i16x8.shr_u(t, 1), m18))));
    v = v128.load(qa, 48);
    lo = i16x8.add(lo, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 12), v128.and(v, m5)));
    hi = i16x8.add(hi, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 44), v128.or(v128.and(i16x8.shr_u(v, 5), m3), v128.and(i16x8.shr_u(t, 3), m18))));
    let lo32 = i32x4.extadd_pairwise_i16x8_s(lo);
    let hi32 = i32x4.extadd_pairwise_i16x8_s(hi);
    t = v128.load(qa, 144);
    v = v128.load(qa, 64);
    lo = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 16), v128.and(v, m5));
    hi = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 48), v128.or(v128.and(i16x8.shr_u(v, 5), m3), v128.and(i16x8.shl(t, 3), m18)));
    v = v128.load(qa, 80);
    lo = i16x8.add(lo, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 20), v128.and(v, m5)));
    hi = i16x8.add(hi, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 52), v128.or(v128.and(i16x8.shr_u(v, 5), m3), v128.and(i16x8.shl(t, 1), m18))));
    v = v128.load(qa, 96);
    lo = i16x8.add(lo, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 24), v128.and(v, m5)));
    hi = i16x8.add(hi, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 56), v128.or(v128.and(i16x8.shr_u(v, 5), m3), v128.and(i16x8.shr_u(t, 1), m18))));
    v = v128.load(qa, 112);
    lo = i16x8.add(lo, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 28), v128.and(v, m5)));
    hi = i16x8.add(hi, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 60), v128.or(v128.and(i16x8.shr_u(v, 5), m3), v128.and(i16x8.shr_u(t, 3), m18))));
    lo32 = i32x4.add(lo32, i32x4.extadd_pairwise_i16x8_s(lo));
    hi32 = i32x4.add(hi32, i32x4.extadd_pairwise_i16x8_s(hi));
    const i = (c & 1) << 1; // byte i (sub-block 2c) and i + 1 (2c + 1) of each row's lane
    const so = <usize>c << 3;
    acc = fmaF32x4(acc, f32x4.mul(laneByteAt(mb, i), nm), v128.load32_splat(xs + so));
    acc = fmaF32x4(acc, f32x4.convert_i32x4_s(lo32), f32x4.mul(f32x4.mul(laneByteAt(sb, i), d), v128.load32_splat(xd + so)));
    acc = fmaF32x4(acc, f32x4.mul(laneByteAt(mb, i + 1), nm), v128.load32_splat(xs + so, 4));
    acc = fmaF32x4(acc, f32x4.convert_i32x4_s(hi32), f32x4.mul(f32x4.mul(laneByteAt(sb, i + 1), d), v128.load32_splat(xd + so, 4)));
  }
  return acc;
}

/**
 * acc + one token's sub-block (as tokenQ5K's per sub-block): w0 … w7 its 5-bit quant chunks, xb its 32 activation
 * bytes, dx / sx its activation scale and sum; two i16 sums of four dots each (≤ 4·2·31·127 = 31496), widened.
 */
// @ts-ignore: decorator
@inline function subToken(
  acc: v128, w0: v128, w1: v128, w2: v128, w3: v128, w4: v128, w5: v128, w6: v128, w7: v128,
  scd: v128, mnd: v128, xb: usize, dx: usize, sx: usize,
): v128 {
  let s = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb), w0);
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 4), w1));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 8), w2));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 12), w3));
  let s32 = i32x4.extadd_pairwise_i16x8_s(s);
  s = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 16), w4);
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 20), w5));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 24), w6));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 28), w7));
  s32 = i32x4.add(s32, i32x4.extadd_pairwise_i16x8_s(s));
  const q = f32x4.convert_i32x4_s(s32);
  return fmaF32x4(fmaF32x4(acc, mnd, v128.load32_splat(sx)), q, f32x4.mul(scd, v128.load32_splat(dx)));
}

/**
 * Chunk `v`'s quants of sub-block 2c (sh 0, lowMask 0x1f, topMask 0) or 2c + 1 (sh 5, lowMask 7, topMask 0x18):
 * the low bits shifted down and masked, or'd with the two top bits `top` already moved to bits 3, 4 (zero for 2c).
 */
// @ts-ignore: decorator
@inline function quants5(v: v128, top: v128, sh: i32, lowMask: v128, topMask: v128): v128 {
  return v128.or(v128.and(i16x8.shr_u(v, sh), lowMask), v128.and(top, topMask));
}

/**
 * One tile: group `wg` · nTok (4 or 8; a constant after inlining) tokens' Q8 rows from x0 (xrb apart) → out rows o,
 * o + osb, … One flat loop over sub-blocks, each one's eight chunks assembled once for all tokens (as the Q4_K tile,
 * gemv-q4-k-rows4.ts: which sub-block of the pair is a shift amount and two masks, not a branch).
 */
// @ts-ignore: decorator
@inline function tile(
  wg: usize, x0: usize, xrb: usize, nbk: i32, k: i32, o: usize, osb: usize, nTok: i32, masked: bool, lo: i32, hi: i32,
): void {
  const xd = x0 + <usize>k;
  const xs = xd + (<usize>k >> 3);
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let a4 = f32x4.splat(0), a5 = f32x4.splat(0), a6 = f32x4.splat(0), a7 = f32x4.splat(0);
  let d = f32x4.splat(0), nm = f32x4.splat(0), sb = f32x4.splat(0), mb = f32x4.splat(0);
  const pick0 = i8x16(0, -128, -128, -128, 4, -128, -128, -128, 8, -128, -128, -128, 12, -128, -128, -128);
  for (let j = 0; j < nbk << 3; j++) {
    const pg = wg + <usize>(j >> 3) * GROUP_BLOCK;
    if ((j & 3) == 0) {
      d = kScales4(pg);
      nm = f32x4.neg(kScales4(pg + 8));
      sb = sixBitBytes(pg, (j >> 2) & 1, false);
      mb = sixBitBytes(pg, (j >> 2) & 1, true);
    }
    const pick = i8x16.add(pick0, i8x16.splat(<i8>(j & 3))); // byte j & 3 of each row's lane (−128 + i stays ≥ 16)
    const scd = f32x4.mul(laneByte(sb, pick), d);
    const mnd = f32x4.mul(laneByte(mb, pick), nm);
    const odd = j & 1;
    const sh = odd * 5;
    const lm = i8x16.splat(<i8>(odd ? 7 : 0x1f));
    const tm = i8x16.splat(<i8>(odd ? 0x18 : 0));
    const qa = pg + 64 + <usize>((j >> 1) & 3) * 160;
    let t = v128.load(qa, 128);
    const w0 = quants5(v128.load(qa), i16x8.shl(t, 3), sh, lm, tm);
    const w1 = quants5(v128.load(qa, 16), i16x8.shl(t, 1), sh, lm, tm);
    const w2 = quants5(v128.load(qa, 32), i16x8.shr_u(t, 1), sh, lm, tm);
    const w3 = quants5(v128.load(qa, 48), i16x8.shr_u(t, 3), sh, lm, tm);
    t = v128.load(qa, 144);
    const w4 = quants5(v128.load(qa, 64), i16x8.shl(t, 3), sh, lm, tm);
    const w5 = quants5(v128.load(qa, 80), i16x8.shl(t, 1), sh, lm, tm);
    const w6 = quants5(v128.load(qa, 96), i16x8.shr_u(t, 1), sh, lm, tm);
    const w7 = quants5(v128.load(qa, 112), i16x8.shr_u(t, 3), sh, lm, tm);
    const xo = <usize>j << 5;
    const so = <usize>j << 2;
    a0 = subToken(a0, w0, w1, w2, w3, w4, w5, w6, w7, scd, mnd, x0 + xo, xd + so, xs + so);
    a1 = subToken(a1, w0, w1, w2, w3, w4, w5, w6, w7, scd, mnd, x0 + 1 * xrb + xo, xd + 1 * xrb + so, xs + 1 * xrb + so);
    a2 = subToken(a2, w0, w1, w2, w3, w4, w5, w6, w7, scd, mnd, x0 + 2 * xrb + xo, xd + 2 * xrb + so, xs + 2 * xrb + so);
    a3 = subToken(a3, w0, w1, w2, w3, w4, w5, w6, w7, scd, mnd, x0 + 3 * xrb + xo, xd + 3 * xrb + so, xs + 3 * xrb + so);
    if (nTok == 8) {
      a4 = subToken(a4, w0, w1, w2, w3, w4, w5, w6, w7, scd, mnd, x0 + 4 * xrb + xo, xd + 4 * xrb + so, xs + 4 * xrb + so);
      a5 = subToken(a5, w0, w1, w2, w3, w4, w5, w6, w7, scd, mnd, x0 + 5 * xrb + xo, xd + 5 * xrb + so, xs + 5 * xrb + so);
      a6 = subToken(a6, w0, w1, w2, w3, w4, w5, w6, w7, scd, mnd, x0 + 6 * xrb + xo, xd + 6 * xrb + so, xs + 6 * xrb + so);
      a7 = subToken(a7, w0, w1, w2, w3, w4, w5, w6, w7, scd, mnd, x0 + 7 * xrb + xo, xd + 7 * xrb + so, xs + 7 * xrb + so);
    }
  }
  storeTile(o, osb, nTok, masked, lo, hi, a0, a1, a2, a3, a4, a5, a6, a7);
}

/** This kernel's tile for gemvRows4 (rows4-driver.ts): one token (or a masked one) by tokenQ5K, 4 or 8 by `tile`. */
@final class Tiles {
  // @ts-ignore: decorator
  @inline run(
    wg: usize, x0: usize, xrb: usize, nb: i32, k: i32, o: usize, osb: usize, nTok: i32, masked: bool, lo: i32, hi: i32,
  ): void {
    if (nTok == 1) storeRows(o, tokenQ5K(wg, x0, nb, k), masked, lo, hi);
    else tile(wg, x0, xrb, nb, k, o, osb, nTok, masked, lo, hi);
  }
}

/**
 * Q5_K weights in 4-row groups · n Q8 activation rows at x → out f32 [n, outStride], rows r0 … r1−1 (any bounds, as
 * gemv_q4_0_r4; k % 256 == 0), tiles of 8, 4 and 1 tokens.
 */
export function gemv_q5_k_r4(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  if (n == 1 && ((r0 | r1) & 3) == 0) tokenGroups(w, x, out, k, r0 >> 2, r1 >> 2);
  else gemvRows4<Tiles>(w, x, out, k, r0, r1, n, outStride, k >> 8, <usize>(k >> 8) * GROUP_BLOCK);
}

/** Decode's case, whole groups g0 … g1−1, in a function of its own (see gemv-q4-k-rows4.ts's tokenGroups). */
function tokenGroups(w: usize, x: usize, out: usize, k: i32, g0: i32, g1: i32): void {
  if (!ASC_FEATURE_RELAXED_SIMD) {
    unreachable();
    return;
  }
  const nbk = k >> 8;
  const gb = <usize>nbk * GROUP_BLOCK;
  for (let g = g0; g < g1; g++) v128.store(out + (<usize>g << 4), tokenQ5K(w + <usize>g * gb, x, nbk, k));
}
