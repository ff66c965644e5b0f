/**
 * The one-token tile of the Q6_K 4-row-group matvec (gemv-q6-k-rows4.ts holds the layout, q6Encode's coding and the
 * multi-token tiles): decode's case. Same products as the multi-token tile's q6Token, all in integers until the one
 * f32 multiply-add per block, so results are bit-identical to it; what differs is what the loop keeps live, which V8
 * pays for in spills (it materialises every v128 constant of a function at entry and holds it through the loops):
 * - the fourth quant of each 4-chunk run from the chunks' top bits by `andnot` with the 0x3f mask the other three
 *   chunks take (c & 0xc0), shifted into place — one constant where the tile's three masks take three;
 * - a block's two sub-block scales picked with fixed shuffles from the scale word moved right 16 bits for odd blocks,
 *   instead of two runtime-selected swizzle index vectors (four constants, and a saturating add per swizzle);
 * - the block's two 16-quant halves as a two-step loop (written out, V8 loaded all six chunks up front and spilled:
 *   −5 % at k = 8192, no change at 2048).
 */
import { fmaF32x4 } from './simd-dot';
import { kScales4 } from './f16-scales';

/** Bytes of one group's super-block: the four rows' f16 d, then 52 chunks (48 of quants, 4 of scales). */
const GROUP_BLOCK: usize = 840;

/**
 * The i16 sums of one 16-quant half for four rows: c the half's three chunks (q6Encode: quants 4k … 4k + 3 in bits
 * 0…5 of chunk k, bits 2k, 2k + 1 of quants 12 … 15 in its bits 6, 7), xa its 16 activation bytes, as two i16x8 (chunks
 * 0, 1 and 2, 3), dotted with the rows' i16 scale pairs sc into i32 per row.
 */
// @ts-ignore: decorator
@inline function halfSums(p: usize, xa: v128, sc: v128, m6: v128): v128 {
  const c0 = v128.load(p), c1 = v128.load(p, 16), c2 = v128.load(p, 32);
  const w3 = v128.or(
    v128.or(i16x8.shr_u(v128.andnot(c0, m6), 6), i16x8.shr_u(v128.andnot(c1, m6), 4)),
    i16x8.shr_u(v128.andnot(c2, m6), 2),
  );
  const s0 = i16x8.add(
    i16x8.relaxed_dot_i8x16_i7x16_s(v128.shuffle<i32>(xa, xa, 0, 0, 0, 0), v128.and(c0, m6)),
    i16x8.relaxed_dot_i8x16_i7x16_s(v128.shuffle<i32>(xa, xa, 1, 1, 1, 1), v128.and(c1, m6)),
  );
  const s1 = i16x8.add(
    i16x8.relaxed_dot_i8x16_i7x16_s(v128.shuffle<i32>(xa, xa, 2, 2, 2, 2), v128.and(c2, m6)),
    i16x8.relaxed_dot_i8x16_i7x16_s(v128.shuffle<i32>(xa, xa, 3, 3, 3, 3), w3),
  );
  return i32x4.add(i32x4.dot_i16x8_s(s0, sc), i32x4.dot_i16x8_s(s1, sc));
}

/**
 * One token · group `wg` (nb activation blocks of 32) with its Q8 row at x0 → the four f32 rows at o. k: the row
 * length (where the row's activation scales start; the half-block sums follow them).
 */
// @ts-ignore: decorator
@inline export function tokenQ6K(wg: usize, x0: usize, nb: i32, k: i32, o: usize): void {
  const m6 = i8x16.splat(0x3f);
  const xd = x0 + <usize>k;
  const xh = xd + (<usize>nb << 3);
  let acc = f32x4.splat(0);
  let d = f32x4.splat(0);
  for (let bi = 0; bi < nb; bi++) {
    const sb = wg + <usize>(bi >> 3) * GROUP_BLOCK; // the group super-block
    const bl = bi & 7;
    if (bl == 0) d = kScales4(sb);
    // Sub-blocks 2·bl, 2·bl + 1: bytes 2·(bl & 1), + 1 of each row's lane in scale chunk bl / 2, moved to bytes 0, 1.
    const sw = i32x4.shr_u(v128.load(sb + 8 + 768 + (<usize>(bl >> 1) << 4)), (bl & 1) << 4);
    const sa = i16x8.extend_low_i8x16_s(v128.shuffle<u8>(sw, sw, 0, 0, 4, 4, 8, 8, 12, 12, 0, 0, 4, 4, 8, 8, 12, 12));
    const sc = i16x8.extend_low_i8x16_s(v128.shuffle<u8>(sw, sw, 1, 1, 5, 5, 9, 9, 13, 13, 1, 1, 5, 5, 9, 9, 13, 13));
    const cb = sb + 8 + <usize>bl * 96;
    const xb = x0 + (<usize>bi << 5);
    let v = i32x4.splat(0);
    let s = sa;
    for (let h: usize = 0; h < 96; h += 48) {
      v = i32x4.add(v, halfSums(cb + h, v128.load(xb + (h / 3)), s, m6));
      s = sc;
    }
    // |Σ x| over 16 lanes ≤ 2048 fits the low i16 of each isum16; dot with [sc, sc] pairs gives 2·sc·Σ x.
    const hs = xh + (<usize>bi << 3);
    const off = i32x4.add(i32x4.dot_i16x8_s(sa, v128.load16_splat(hs)), i32x4.dot_i16x8_s(sc, v128.load16_splat(hs, 4)));
    v = i32x4.sub(v, i32x4.shl(off, 4));
    acc = fmaF32x4(acc, f32x4.convert_i32x4_s(v), f32x4.mul(d, v128.load32_splat(xd + (<usize>bi << 2))));
  }
  v128.store(o, acc);
}
