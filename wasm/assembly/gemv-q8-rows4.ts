/**
 * Multi-token Q8_0 (prefill, encoders) in 4-row groups with lanes = rows, as gemv-rows4.ts does for Q5_0. Signed
 * weights cannot be the i7 operand of `i16x8.relaxed_dot_i8x16_i7x16_s`, so each call packs the stored row pairs,
 * group by group, into scratch after the Q8 activation rows as two unsigned nibble planes of u = w + 128 (w's sign bit
 * flipped) = 16·H + L, both 0…15: per block (264 bytes) the four rows' f16 scales (8 bytes), then eight 16-byte
 * chunks of L, then eight of H, chunk j = elements 4j … 4j + 3 of rows 0, 1, 2, 3. A token's block is 16 relaxed
 * dots of a chunk against four activation bytes splatted to every lane; eight dots add in i16 (each lane
 * ≤ 8·2·15·127 = 30480 < 2¹⁵), two pairwise widenings give each row's Σ L·q and Σ H·q, and
 * Σ w·q = 16·Σ H·q + Σ L·q − 128·Σ q exactly in i32 (Σ q from the activation row's half-block sums), scaled by
 * d_w·d_x as gemv_q8_0 does. Four rows × eight tokens per tile (four for the last tokens of a multiple of 4); rows
 * outside whole groups, the last n % 4 tokens, n < 8 and the builds without relaxed SIMD run gemv_q8_0.
 */
import { gemv_q8_0 } from './gemv-q32';
import { scales4, storeTransposed } from './gemv-rows4';
import { q8RowBytes } from './q8-activations';
import { fmaF32x4, hiNibbles } from './simd-dot';

/** Bytes of one packed block of a group: 4 f16 scales, 8 L chunks, 8 H chunks. */
const GROUP_BLOCK: usize = 264;

/** Σ_j dot(x bytes 4j … 4j + 3 splatted, chunk j) over the 8 chunks at pc (one plane of one block), i16x8. */
// @ts-ignore: decorator
@inline function plane(pc: usize, xb: usize): v128 {
  let s = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb), v128.load(pc));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 4), v128.load(pc, 16)));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 8), v128.load(pc, 32)));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 12), v128.load(pc, 48)));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 16), v128.load(pc, 64)));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 20), v128.load(pc, 80)));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 24), v128.load(pc, 96)));
  return i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 28), v128.load(pc, 112)));
}

/** acc + d_w·d_x·Σ w·q for the packed block at pb (four rows) and one token's block (quants xb, d at dx, Σq at hx). */
// @ts-ignore: decorator
@inline function blockToken(acc: v128, pb: usize, d: v128, xb: usize, dx: usize, hx: usize): v128 {
  const l = i32x4.extadd_pairwise_i16x8_s(plane(pb + 8, xb));
  const h = i32x4.extadd_pairwise_i16x8_s(plane(pb + 136, xb));
  const sq = (load<i32>(hx) + load<i32>(hx, 4)) << 7; // 128·Σq of the block
  const p = i32x4.sub(i32x4.add(i32x4.shl(h, 4), l), i32x4.splat(sq)); // [Σ w·q of rows 0 … 3]
  return fmaF32x4(acc, f32x4.convert_i32x4_s(p), f32x4.mul(d, v128.load32_splat(dx)));
}

/** u = w + 128 of 16 signed weight bytes: low nibbles (hi = false) or high nibbles. */
// @ts-ignore: decorator
@inline function nibbles(v: v128, hi: bool): v128 {
  const u = v128.xor(v, i8x16.splat(-128));
  const mask = i8x16.splat(0x0f);
  return hi ? hiNibbles(u, mask) : v128.and(u, mask);
}

/**
 * Rearranges rows 4g … 4g + 3 — stored row pairs at `wp` (pair 2g) and wp + 2·rowBytes (pair 2g + 1), blocks
 * alternating A_b, B_b (34 bytes each) — into the group layout at `dst` (see the file header).
 */
// @ts-ignore: decorator
@inline function packGroupQ8(wp: usize, rowBytes: usize, nb: i32, dst: usize): void {
  for (let b = 0; b < nb; b++) {
    const p0 = wp + <usize>b * 68;
    const p1 = p0 + (rowBytes << 1);
    const o = dst + <usize>b * GROUP_BLOCK;
    store<u16>(o, load<u16>(p0));
    store<u16>(o, load<u16>(p0, 34), 2);
    store<u16>(o, load<u16>(p1), 4);
    store<u16>(o, load<u16>(p1, 34), 6);
    for (let half = 0; half < 2; half++) {
      const q = <usize>(2 + 16 * half);
      const a = v128.load(p0 + q), b1 = v128.load(p0 + 34 + q), c = v128.load(p1 + q), e = v128.load(p1 + 34 + q);
      const at = o + 8 + <usize>(64 * half);
      storeTransposed(at, nibbles(a, false), nibbles(b1, false), nibbles(c, false), nibbles(e, false));
      storeTransposed(at + 128, nibbles(a, true), nibbles(b1, true), nibbles(c, true), nibbles(e, true));
    }
  }
}

/** One tile: the packed group at `wg` · nTok (4 or 8) tokens' Q8 rows from x0 → out rows o, o + osb, … */
// @ts-ignore: decorator
@inline function tileQ8Rows4(wg: usize, x0: usize, xrb: usize, nb: i32, k: i32, o: usize, osb: usize, nTok: i32): void {
  const xd = x0 + <usize>k;
  const xh = xd + (<usize>nb << 3); // the half-block sums, after d and s
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let a4 = f32x4.splat(0), a5 = f32x4.splat(0), a6 = f32x4.splat(0), a7 = f32x4.splat(0);
  for (let b = 0; b < nb; b++) {
    const pb = wg + <usize>b * GROUP_BLOCK;
    const d = scales4(pb);
    const xo = <usize>b << 5;
    const so = <usize>b << 2;
    const ho = <usize>b << 3;
    a0 = blockToken(a0, pb, d, x0 + xo, xd + so, xh + ho);
    a1 = blockToken(a1, pb, d, x0 + xrb + xo, xd + xrb + so, xh + xrb + ho);
    a2 = blockToken(a2, pb, d, x0 + 2 * xrb + xo, xd + 2 * xrb + so, xh + 2 * xrb + ho);
    a3 = blockToken(a3, pb, d, x0 + 3 * xrb + xo, xd + 3 * xrb + so, xh + 3 * xrb + ho);
    if (nTok == 8) {
      a4 = blockToken(a4, pb, d, x0 + 4 * xrb + xo, xd + 4 * xrb + so, xh + 4 * xrb + ho);
      a5 = blockToken(a5, pb, d, x0 + 5 * xrb + xo, xd + 5 * xrb + so, xh + 5 * xrb + ho);
      a6 = blockToken(a6, pb, d, x0 + 6 * xrb + xo, xd + 6 * xrb + so, xh + 6 * xrb + ho);
      a7 = blockToken(a7, pb, d, x0 + 7 * xrb + xo, xd + 7 * xrb + so, xh + 7 * xrb + ho);
    }
  }
  v128.store(o, a0);
  v128.store(o + osb, a1);
  v128.store(o + 2 * osb, a2);
  v128.store(o + 3 * osb, a3);
  if (nTok == 8) {
    v128.store(o + 4 * osb, a4);
    v128.store(o + 5 * osb, a5);
    v128.store(o + 6 * osb, a6);
    v128.store(o + 7 * osb, a7);
  }
}

/**
 * Q8_0 weights (row-pair layout) · n Q8 activation rows → out f32 [n, outStride], rows r0 … r1−1, as gemv_q8_0 but
 * (n ≥ 8) with scratch for the packed groups at x + n·q8RowBytes(k) (group g at g·(k/32)·264 bytes in, so threads'
 * row ranges never share scratch); see the file header.
 */
export function gemv_q8_0_rows4(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  const g0 = (r0 + 3) >> 2;
  const g1 = r1 >> 2;
  if (!ASC_FEATURE_RELAXED_SIMD || n < 8 || g0 >= g1) {
    gemv_q8_0(w, x, out, k, r0, r1, n, outStride);
    return;
  }
  const nb = k >> 5;
  const rowBytes = <usize>nb * 34;
  const xrb = q8RowBytes(k);
  const scratch = x + <usize>n * xrb;
  const gb = <usize>nb * GROUP_BLOCK;
  const osb = <usize>outStride << 2;
  const tiled = n & ~3;
  if (r0 < g0 << 2) gemv_q8_0(w, x, out, k, r0, g0 << 2, n, outStride);
  if (g1 << 2 < r1) gemv_q8_0(w, x, out, k, g1 << 2, r1, n, outStride);
  for (let g = g0; g < g1; g++) {
    const wg = scratch + <usize>g * gb;
    packGroupQ8(w + <usize>(g << 2) * rowBytes, rowBytes, nb, wg);
    for (let t = 0; t < tiled; ) {
      const o = out + ((<usize>t * <usize>outStride + <usize>(g << 2)) << 2);
      if (t + 8 <= tiled) {
        tileQ8Rows4(wg, x + <usize>t * xrb, xrb, nb, k, o, osb, 8);
        t += 8;
      } else {
        tileQ8Rows4(wg, x + <usize>t * xrb, xrb, nb, k, o, osb, 4);
        t += 4;
      }
    }
  }
  if (tiled < n) {
    const xt = x + <usize>tiled * xrb;
    gemv_q8_0(w, xt, out + (<usize>tiled * <usize>outStride << 2), k, g0 << 2, g1 << 2, n - tiled, outStride);
  }
}
