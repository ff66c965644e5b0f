/**
 * The one-token tile of the Q4_K 4-row-group matvec (gemv-q4-k-rows4.ts holds the layout and the multi-token
 * tiles): decode's case. The multi-token tile takes one sub-block per iteration so that its eight weight vectors are
 * shared by up to eight tokens; for one token that loads every 16-byte quant chunk twice (once per nibble half) and
 * shifts it by a variable amount. Here one iteration takes a sub-block pair (2c, 2c + 1): each chunk is loaded once,
 * its low nibbles go to sub-block 2c and its high nibbles (a constant shift) to 2c + 1, and the two i16 sums run side
 * by side. Per sub-block the arithmetic and its order are those of the multi-token tile's, so results are
 * bit-identical to it.
 */
import { kScales4 } from './f16-scales';
import { fmaF32x4, USE_DOT_ADD } from './simd-dot';

/** Bytes of one group's super-block (4 × block_q4_K). */
const GROUP_BLOCK: usize = 576;

/**
 * The 6-bit scales (isMin false) or mins (true) of sub-blocks 4h … 4h + 3 of the four rows as bytes 4r + i (ggml
 * get_scale_min_k4), as gemv-q4-k-rows4.ts's sixBitBytes; the Q5_K kernel (gemv-q5-k-rows4.ts) shares it.
 */
// @ts-ignore: decorator
@inline export function sixBitBytes(pg: usize, h: i32, isMin: bool): v128 {
  const own = isMin ? v128.load(pg, 32) : v128.load(pg, 16); // u1 for mins, u0 for scales
  const src = isMin ? v128.load(pg + (<usize>h << 4), 32) : v128.load(pg + (<usize>h << 5), 16); // own, or u2
  const low = v128.and(isMin ? i32x4.shr_u(src, h << 2) : src, i32x4.splat(h ? 0x0f0f0f0f : 0x3f3f3f3f));
  return v128.or(low, v128.and(i32x4.shr_u(own, 2), i32x4.splat(h ? 0x30303030 : 0)));
}

/** Byte `pick` selects (one per i32 lane) of `bytes` as f32x4. */
// @ts-ignore: decorator
@inline export function laneByte(bytes: v128, pick: v128): v128 {
  return f32x4.convert_i32x4_s(i8x16.swizzle(bytes, pick));
}

/**
 * Byte i (0…3, a runtime value) of every i32 lane of `bytes` as f32x4: two shifts and no constant held in a
 * register, where laneByte's swizzle needs its pick vectors live through the loop (one token: 3–5 % faster).
 */
// @ts-ignore: decorator
@inline export function laneByteAt(bytes: v128, i: i32): v128 {
  return f32x4.convert_i32x4_s(i32x4.shr_u(i32x4.shl(bytes, 24 - (i << 3)), 24));
}

/** Byte i (0 or 1, a constant: immediate shifts) of every i32 lane of `bytes` as f32x4. */
// @ts-ignore: decorator
@inline function laneByte01(bytes: v128, i: i32): v128 {
  return f32x4.convert_i32x4_s(i32x4.shr_u(i32x4.shl(bytes, 24 - (i << 3)), 24));
}

/**
 * acc + sub-blocks 2c, 2c + 1 of one token (their scale and min bytes at bytes 0, 1 of each row's lane): qa the pair's
 * eight quant chunks, xb its 64 activation bytes, so / the offset of its two activation scales (xd) and sums (xs);
 * d, nm, sb, mb the half super-block's d, −dmin and 6-bit scale and min bytes. Each sub-block as the multi-token
 * tile's subToken: acc + mn·s_x, then + q·(sc·d·d_x).
 */
// @ts-ignore: decorator
@inline function pairToken(
  acc: v128, qa: usize, xb: usize, xd: usize, xs: usize, d: v128, nm: v128, sb: v128, mb: v128,
): v128 {
  const mask = i8x16.splat(0x0f);
  let lo = i16x8.splat(0), hi = i16x8.splat(0);
  // A loop of two chunks a step: written out, V8 loaded all eight chunks and sixteen activation splats up front and
  // spilled them; a step's six loads stay in registers.
  for (let j: usize = 0; j < 128; j += 32) {
    const v = v128.load(qa + j), u = v128.load(qa + j, 16);
    const xj = xb + (j >> 2);
    if (USE_DOT_ADD) {
      // The relaxed-dot build (simd-dot.ts): lo and hi accumulate in i32 — the same sums, no widening after.
      lo = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load32_splat(xj), v128.and(v, mask), lo);
      hi = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load32_splat(xj, 32), v128.and(i16x8.shr_u(v, 4), mask), hi);
      lo = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load32_splat(xj, 4), v128.and(u, mask), lo);
      hi = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load32_splat(xj, 36), v128.and(i16x8.shr_u(u, 4), mask), hi);
    } else {
      lo = i16x8.add(lo, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xj), v128.and(v, mask)));
      hi = i16x8.add(hi, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xj, 32), v128.and(i16x8.shr_u(v, 4), mask)));
      lo = i16x8.add(lo, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xj, 4), v128.and(u, mask)));
      hi = i16x8.add(hi, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xj, 36), v128.and(i16x8.shr_u(u, 4), mask)));
    }
  }
  const qLo = f32x4.convert_i32x4_s(USE_DOT_ADD ? lo : i32x4.extadd_pairwise_i16x8_s(lo));
  acc = fmaF32x4(acc, f32x4.mul(laneByte01(mb, 0), nm), v128.load32_splat(xs));
  acc = fmaF32x4(acc, qLo, f32x4.mul(f32x4.mul(laneByte01(sb, 0), d), v128.load32_splat(xd)));
  const qHi = f32x4.convert_i32x4_s(USE_DOT_ADD ? hi : i32x4.extadd_pairwise_i16x8_s(hi));
  acc = fmaF32x4(acc, f32x4.mul(laneByte01(mb, 1), nm), v128.load32_splat(xs, 4));
  return fmaF32x4(acc, qHi, f32x4.mul(f32x4.mul(laneByte01(sb, 1), d), v128.load32_splat(xd, 4)));
}

/**
 * One token · group `wg` (nbk super-blocks) with its Q8 row at x0 → the four f32 rows at o. k: the row length
 * (where the row's activation scales start). One flat loop over sub-block pairs, the half super-block's scales
 * unpacked every second pair: a loop over half super-blocks with both pairs written out ran at 0.6× (V8 spills).
 */
// @ts-ignore: decorator
@inline export function tokenQ4K(wg: usize, x0: usize, nbk: i32, k: i32, o: usize): void {
  const xd = x0 + <usize>k;
  const xs = xd + (<usize>k >> 3);
  let acc = f32x4.splat(0);
  let d = f32x4.splat(0), nm = f32x4.splat(0), sb = f32x4.splat(0), mb = f32x4.splat(0);
  for (let c = 0; c < nbk << 2; c++) {
    const pg = wg + <usize>(c >> 2) * GROUP_BLOCK;
    if ((c & 1) == 0) {
      // A new half super-block: sub-blocks 4h … 4h + 3; when h = 0 a new super-block, its d and −dmin (converted
      // once per super-block: kScales4 costs a few instructions more than the multiply it replaced).
      if ((c & 3) == 0) {
        d = kScales4(pg);
        nm = f32x4.neg(kScales4(pg + 8));
      }
      sb = sixBitBytes(pg, (c >> 1) & 1, false);
      mb = sixBitBytes(pg, (c >> 1) & 1, true);
    } else {
      // The half's second pair: its bytes 2, 3 moved to 0, 1, so that pairToken's byte picks are immediate shifts
      // (a variable shift amount costs V8 a GPR → XMM move and a mask per pick).
      sb = i32x4.shr_u(sb, 16);
      mb = i32x4.shr_u(mb, 16);
    }
    const so = <usize>c << 3;
    acc = pairToken(acc, pg + 64 + (<usize>(c & 3) << 7), x0 + (<usize>c << 6), xd + so, xs + so, d, nm, sb, mb);
  }
  v128.store(o, acc);
}
