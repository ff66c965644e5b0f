/**
 * Multi-token Q8_0 (prefill, encoders) in 4-row groups with lanes = rows, as gemv-rows4.ts does for Q5_0. Signed
 * weights cannot be the i7 operand of `i16x8.relaxed_dot_i8x16_i7x16_s`, so each call packs the stored row pairs,
 * group by group, into scratch after the Q8 activation rows as two unsigned nibble planes of u = w + 128 (w's sign bit
 * flipped) = 16·H + L, both 0…15: per block (264 bytes) the four rows' f16 scales (8 bytes), then eight 16-byte
 * chunks of L, then eight of H, chunk j = elements 4j … 4j + 3 of rows 0, 1, 2, 3. A token's block is 16 relaxed
 * dots of a chunk against four activation bytes splatted to every lane; eight dots add in i16 (each lane
 * ≤ 8·2·15·127 = 30480 < 2¹⁵), two pairwise widenings give each row's Σ L·q and Σ H·q, and
 * Σ w·q = 16·Σ H·q + Σ L·q − 128·Σ q exactly in i32 (Σ q from the activation row's half-block sums), scaled by
 * d_w·d_x as gemv_q8_0 does. Tiles of four rows × four tokens, chunks outer: each chunk pair (L, H) is loaded once
 * for the four tokens, whose eight i16 sums stay in registers (5 % over eight tokens with the block's chunks
 * reloaded per token, same process and data). Rows outside whole groups, the last n % 4 tokens, n < 8 and the
 * builds without relaxed SIMD run gemv_q8_0.
 */
import { gemv_q8_0 } from './gemv-q32';
import { scales4, storeTransposed } from './gemv-rows4';
import { q8RowBytes } from './q8-activations';
import { fmaF32x4, hiNibbles } from './simd-dot';

/** Bytes of one packed block of a group: 4 f16 scales, 8 L chunks, 8 H chunks. */
const GROUP_BLOCK: usize = 264;

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

/** acc + d·d_x·(16·Σ H·q + Σ L·q − 128·Σq) of one token's block from its i16 plane sums. */
// @ts-ignore: decorator
@inline function finishToken(acc: v128, l: v128, h: v128, d: v128, dx: usize, hx: usize): v128 {
  const sq = (load<i32>(hx) + load<i32>(hx, 4)) << 7;
  const p = i32x4.sub(
    i32x4.add(i32x4.shl(i32x4.extadd_pairwise_i16x8_s(h), 4), i32x4.extadd_pairwise_i16x8_s(l)),
    i32x4.splat(sq),
  );
  return fmaF32x4(acc, f32x4.convert_i32x4_s(p), f32x4.mul(d, v128.load32_splat(dx)));
}

/** One tile: the packed group at `wg` · 4 tokens' Q8 rows from x0 → out rows o … o + 3·osb; chunks outer. */
// @ts-ignore: decorator
@inline function tileQ8Rows4(wg: usize, x0: usize, xrb: usize, nb: i32, k: i32, o: usize, osb: usize): void {
  const xd = x0 + <usize>k;
  const xh = xd + (<usize>nb << 3);
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  for (let b = 0; b < nb; b++) {
    const pb = wg + <usize>b * GROUP_BLOCK;
    const x = x0 + (<usize>b << 5);
    let l0 = i16x8.splat(0), l1 = i16x8.splat(0), l2 = i16x8.splat(0), l3 = i16x8.splat(0);
    let h0 = i16x8.splat(0), h1 = i16x8.splat(0), h2 = i16x8.splat(0), h3 = i16x8.splat(0);
    for (let j: usize = 0; j < 32; j += 4) {
      const cl = v128.load(pb + 8 + (j << 2));
      const ch = v128.load(pb + 136 + (j << 2));
      let s = v128.load32_splat(x + j);
      l0 = i16x8.add(l0, i16x8.relaxed_dot_i8x16_i7x16_s(s, cl));
      h0 = i16x8.add(h0, i16x8.relaxed_dot_i8x16_i7x16_s(s, ch));
      s = v128.load32_splat(x + xrb + j);
      l1 = i16x8.add(l1, i16x8.relaxed_dot_i8x16_i7x16_s(s, cl));
      h1 = i16x8.add(h1, i16x8.relaxed_dot_i8x16_i7x16_s(s, ch));
      s = v128.load32_splat(x + 2 * xrb + j);
      l2 = i16x8.add(l2, i16x8.relaxed_dot_i8x16_i7x16_s(s, cl));
      h2 = i16x8.add(h2, i16x8.relaxed_dot_i8x16_i7x16_s(s, ch));
      s = v128.load32_splat(x + 3 * xrb + j);
      l3 = i16x8.add(l3, i16x8.relaxed_dot_i8x16_i7x16_s(s, cl));
      h3 = i16x8.add(h3, i16x8.relaxed_dot_i8x16_i7x16_s(s, ch));
    }
    const d = scales4(pb);
    const so = <usize>b << 2;
    const ho = <usize>b << 3;
    a0 = finishToken(a0, l0, h0, d, xd + so, xh + ho);
    a1 = finishToken(a1, l1, h1, d, xd + xrb + so, xh + xrb + ho);
    a2 = finishToken(a2, l2, h2, d, xd + 2 * xrb + so, xh + 2 * xrb + ho);
    a3 = finishToken(a3, l3, h3, d, xd + 3 * xrb + so, xh + 3 * xrb + ho);
  }
  v128.store(o, a0);
  v128.store(o + osb, a1);
  v128.store(o + 2 * osb, a2);
  v128.store(o + 3 * osb, a3);
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
    for (let t = 0; t < tiled; t += 4) {
      tileQ8Rows4(wg, x + <usize>t * xrb, xrb, nb, k, out + ((<usize>t * <usize>outStride + <usize>(g << 2)) << 2), osb);
    }
  }
  if (tiled < n) {
    const xt = x + <usize>tiled * xrb;
    gemv_q8_0(w, xt, out + (<usize>tiled * <usize>outStride << 2), k, g0 << 2, g1 << 2, n - tiled, outStride);
  }
}
