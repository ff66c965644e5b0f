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
 * Several tokens run the one-token tile each (decode is the case that matters). Relaxed-SIMD builds only.
 */
import { laneByte, sixBitBytes } from './gemv-q4-k-rows4-token';
import { gemvRows4, storeRows } from './rows4-driver';
import { scales4 } from './gemv-stored-rows4';
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
  const pick0 = i8x16(0, -128, -128, -128, 4, -128, -128, -128, 8, -128, -128, -128, 12, -128, -128, -128);
  for (let c = 0; c < nbk << 2; c++) {
    const pg = wg + <usize>(c >> 2) * GROUP_BLOCK;
    if ((c & 1) == 0) {
      // A new half super-block: sub-blocks 4h … 4h + 3 (and a new super-block when h = 0).
      d = scales4(pg);
      nm = f32x4.neg(scales4(pg + 8));
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
    const pickLo = i8x16.add(pick0, i8x16.splat(<i8>((c & 1) << 1))); // −128 + i stays ≥ 16: a zero byte
    const pickHi = i8x16.add(pickLo, i8x16.splat(1));
    const so = <usize>c << 3;
    acc = fmaF32x4(acc, f32x4.mul(laneByte(mb, pickLo), nm), v128.load32_splat(xs + so));
    acc = fmaF32x4(acc, f32x4.convert_i32x4_s(lo32), f32x4.mul(f32x4.mul(laneByte(sb, pickLo), d), v128.load32_splat(xd + so)));
    acc = fmaF32x4(acc, f32x4.mul(laneByte(mb, pickHi), nm), v128.load32_splat(xs + so, 4));
    acc = fmaF32x4(acc, f32x4.convert_i32x4_s(hi32), f32x4.mul(f32x4.mul(laneByte(sb, pickHi), d), v128.load32_splat(xd + so, 4)));
  }
  return acc;
}

/** This kernel's tile for gemvRows4 (rows4-driver.ts): nTok tokens one after another (a one-token kernel). */
@final class Tiles {
  // @ts-ignore: decorator
  @inline run(
    wg: usize, x0: usize, xrb: usize, nb: i32, k: i32, o: usize, osb: usize, nTok: i32, masked: bool, lo: i32, hi: i32,
  ): void {
    for (let t = 0; t < nTok; t++) storeRows(o + <usize>t * osb, tokenQ5K(wg, x0 + <usize>t * xrb, nb, k), masked, lo, hi);
  }
}

/**
 * Q5_K weights in 4-row groups · n Q8 activation rows at x → out f32 [n, outStride], rows r0 … r1−1 (any bounds, as
 * gemv_q4_0_r4; k % 256 == 0), token by token.
 */
export function gemv_q5_k_r4(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  gemvRows4<Tiles>(w, x, out, k, r0, r1, n, outStride, k >> 8, <usize>(k >> 8) * GROUP_BLOCK);
}
