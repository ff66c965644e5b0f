/**
 * Q4_K matvec over weights stored in 4-row groups (rows4-layout.ts: head 2 — d, dmin — then 35 body words), any
 * token count: tiles of four rows × 8, 4 or 1 tokens, lanes = rows. A group's super-block (576 bytes) is
 *   +0  d of rows 0…3 (f16×4)      +8  dmin of rows 0…3 (f16×4)
 *   +16, +32, +48  scale words u0, u1, u2 (ggml's `scales[12]` as three u32) of rows 0…3 (i32x4 each)
 *   +64 + 16·(8c + m)  quant bytes 32c + 4m … + 3 of rows 0…3: low nibbles = sub-block 2c, high = 2c + 1,
 *                      elements 4m … 4m + 3 of it.
 * So each sub-block's 6-bit scale and min unpack for four rows at once (lanes = rows, once per group and sub-block for
 * all tokens of a tile: the half super-block's scale bytes are assembled every four sub-blocks, then one swizzle
 * picks a sub-block's), and a token's sub-block is eight `i16x8.relaxed_dot_i8x16_i7x16_s` of the nibble chunks
 * against four activation bytes splatted to every lane, added in i16 (≤ 8·2·15·127 = 30480), one pairwise widening,
 * then acc += q·(d·sc·d_x) − (dmin·m)·s_x — no transpose-add. Relaxed-SIMD builds only (the host stores this layout
 * only where rows4_kernels() is 1); elsewhere a trap.
 */
import { gemvRows4, storeTile } from './rows4-driver';
import { kScales4 } from './f16-scales';
import { fmaF32x4 } from './simd-dot';
import { tokenQ4K } from './gemv-q4-k-rows4-token';

/** This kernel's tile for gemvRows4 (rows4-driver.ts). */
@final class Tiles {
  // @ts-ignore: decorator
  @inline run(
    wg: usize, x0: usize, xrb: usize, nb: i32, k: i32, o: usize, osb: usize, nTok: i32, masked: bool, lo: i32, hi: i32,
  ): void {
    if (nTok == 1 && !masked) tokenQ4K(wg, x0, nb, k, o); // one token: a sub-block pair per step (gemv-q4-k-rows4-token.ts)
    else tile(wg, x0, xrb, nb, k, o, osb, nTok, masked, lo, hi);
  }
}

/** Bytes of one group's super-block (4 × block_q4_K). */
const GROUP_BLOCK: usize = 576;

/**
 * The 6-bit scales (isMin false) or mins (true) of sub-blocks 4h … 4h + 3 of the four rows (ggml get_scale_min_k4):
 * byte 4r + i = value 4h + i of row r. h = 0 masks u0 / u1; h = 1 takes four bits of u2 (mins: its high nibbles)
 * and the top two bits of u0 / u1's bytes. No branch on h: the address and masks follow it.
 */
// @ts-ignore: decorator
@inline function sixBitBytes(pg: usize, h: i32, isMin: bool): v128 {
  const own = isMin ? v128.load(pg, 32) : v128.load(pg, 16); // u1 for mins, u0 for scales
  const src = isMin ? v128.load(pg + (<usize>h << 4), 32) : v128.load(pg + (<usize>h << 5), 16); // own, or u2
  const low = v128.and(isMin ? i32x4.shr_u(src, h << 2) : src, i32x4.splat(h ? 0x0f0f0f0f : 0x3f3f3f3f));
  return v128.or(low, v128.and(i32x4.shr_u(own, 2), i32x4.splat(h ? 0x30303030 : 0)));
}

/** Byte i (0…3) of every i32 lane of `bytes` as f32x4 (one swizzle: indices ≥ 16 give zero bytes). */
// @ts-ignore: decorator
@inline function laneByte(bytes: v128, pick: v128): v128 {
  return f32x4.convert_i32x4_s(i8x16.swizzle(bytes, pick));
}

/** acc + q·(scd·d_x) + mnd·s_x for one token's sub-block: n0 … n7 the nibble chunks, xb its 32 activation bytes. */
// @ts-ignore: decorator
@inline function subToken(
  acc: v128, n0: v128, n1: v128, n2: v128, n3: v128, n4: v128, n5: v128, n6: v128, n7: v128,
  scd: v128, mnd: v128, xb: usize, dx: usize, sx: usize,
): v128 {
  // Immediate load offsets (not `xb + 4`): V8 folds them into the address, an i32.add it cannot.
  let s = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb), n0);
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 4), n1));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 8), n2));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 12), n3));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 16), n4));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 20), n5));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 24), n6));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 28), n7));
  const q = f32x4.convert_i32x4_s(i32x4.extadd_pairwise_i16x8_s(s));
  return fmaF32x4(fmaF32x4(acc, mnd, v128.load32_splat(sx)), q, f32x4.mul(scd, v128.load32_splat(dx)));
}

/**
 * One tile: group `wg` · nTok (1, 4 or 8; a constant after inlining) tokens' Q8 rows from x0 (xrb apart) → out rows
 * o, o + osb, … (four consecutive f32 each; `masked`: only lanes lo … hi−1). One flat loop over sub-blocks, one
 * sub-block per iteration, each unpacked once for all tokens: a loop nested over super-blocks, two or eight
 * sub-blocks written out per iteration all ran at half the speed (V8 loaded every vector of the larger bodies up
 * front and spilled them), so the nibble half is a shift amount and the scales a swizzle index, not branches.
 */
// @ts-ignore: decorator
@inline function tile(
  wg: usize, x0: usize, xrb: usize, nbk: i32, k: i32, o: usize, osb: usize, nTok: i32, masked: bool, lo: i32, hi: i32,
): void {
  const mask = i8x16.splat(0x0f);
  const xd = x0 + <usize>k;
  const xs = xd + (<usize>k >> 3);
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let a4 = f32x4.splat(0), a5 = f32x4.splat(0), a6 = f32x4.splat(0), a7 = f32x4.splat(0);
  // Loop-carried per half super-block: d, −dmin and the four sub-blocks' scales and mins as bytes (sixBitBytes).
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
    const qa = pg + 64 + (<usize>((j >> 1) & 3) << 7);
    const sh = (j & 1) << 2;
    const n0 = v128.and(i16x8.shr_u(v128.load(qa), sh), mask), n1 = v128.and(i16x8.shr_u(v128.load(qa, 16), sh), mask);
    const n2 = v128.and(i16x8.shr_u(v128.load(qa, 32), sh), mask), n3 = v128.and(i16x8.shr_u(v128.load(qa, 48), sh), mask);
    const n4 = v128.and(i16x8.shr_u(v128.load(qa, 64), sh), mask), n5 = v128.and(i16x8.shr_u(v128.load(qa, 80), sh), mask);
    const n6 = v128.and(i16x8.shr_u(v128.load(qa, 96), sh), mask), n7 = v128.and(i16x8.shr_u(v128.load(qa, 112), sh), mask);
    const xo = <usize>j << 5;
    const so = <usize>j << 2;
    a0 = subToken(a0, n0, n1, n2, n3, n4, n5, n6, n7, scd, mnd, x0 + xo, xd + so, xs + so);
    if (nTok >= 4) {
      a1 = subToken(a1, n0, n1, n2, n3, n4, n5, n6, n7, scd, mnd, x0 + 1 * xrb + xo, xd + 1 * xrb + so, xs + 1 * xrb + so);
      a2 = subToken(a2, n0, n1, n2, n3, n4, n5, n6, n7, scd, mnd, x0 + 2 * xrb + xo, xd + 2 * xrb + so, xs + 2 * xrb + so);
      a3 = subToken(a3, n0, n1, n2, n3, n4, n5, n6, n7, scd, mnd, x0 + 3 * xrb + xo, xd + 3 * xrb + so, xs + 3 * xrb + so);
    }
    if (nTok == 8) {
      a4 = subToken(a4, n0, n1, n2, n3, n4, n5, n6, n7, scd, mnd, x0 + 4 * xrb + xo, xd + 4 * xrb + so, xs + 4 * xrb + so);
      a5 = subToken(a5, n0, n1, n2, n3, n4, n5, n6, n7, scd, mnd, x0 + 5 * xrb + xo, xd + 5 * xrb + so, xs + 5 * xrb + so);
      a6 = subToken(a6, n0, n1, n2, n3, n4, n5, n6, n7, scd, mnd, x0 + 6 * xrb + xo, xd + 6 * xrb + so, xs + 6 * xrb + so);
      a7 = subToken(a7, n0, n1, n2, n3, n4, n5, n6, n7, scd, mnd, x0 + 7 * xrb + xo, xd + 7 * xrb + so, xs + 7 * xrb + so);
    }
  }
  storeTile(o, osb, nTok, masked, lo, hi, a0, a1, a2, a3, a4, a5, a6, a7);
}

/**
 * Q4_K weights in 4-row groups · n Q8 activation rows at x → out f32 [n, outStride], rows r0 … r1−1 (any bounds: a
 * group cut by r0 or r1 is computed whole, token by token, and only its rows inside are stored). Tokens go 8 at a
 * time, then 4, then one by one.
 */
export function gemv_q4_k_r4(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  if (n == 1 && ((r0 | r1) & 3) == 0) tokenGroups(w, x, out, k, r0 >> 2, r1 >> 2);
  else gemvRows4<Tiles>(w, x, out, k, r0, r1, n, outStride, k >> 8, <usize>(k >> 8) * GROUP_BLOCK);
}

/**
 * Decode's case (one token, whole groups g0 … g1−1) in a function of its own (a loop: Binaryen does not inline it):
 * V8 materialises every v128 constant of a function at its entry and keeps it live through all its loops, so inside
 * gemvRows4's function the one-token loop carried the 4- and 8-token tiles' constants too, and spilled. Same code
 * per group: bit-identical.
 */
function tokenGroups(w: usize, x: usize, out: usize, k: i32, g0: i32, g1: i32): void {
  if (!ASC_FEATURE_RELAXED_SIMD) {
    unreachable();
    return;
  }
  const nbk = k >> 8;
  const gb = <usize>nbk * GROUP_BLOCK;
  for (let g = g0; g < g1; g++) tokenQ4K(w + <usize>g * gb, x, nbk, k, out + (<usize>g << 4));
}
