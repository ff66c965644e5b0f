/**
 * Multi-token Q5_0 (prefill, batched choices) in 4-row groups with lanes = rows — the layout llama.cpp's CPU "repack"
 * kernels use. The stored row pairs are rearranged per call, group by group, into scratch right after the Q8
 * activation rows (the host reserves rows4Kernel's scratch there): per block of a group, the four rows' f16 scales
 * (8 bytes), then eight 16-byte chunks of the quants unpacked to bytes 0…31 (5th bit merged), chunk j = elements
 * 4j … 4j + 3 of rows 0, 1, 2, 3 (136 bytes per block). A token's block is then 8 `i16x8.relaxed_dot_i8x16_i7x16_s`
 * of a chunk against four activation bytes splatted to every lane (`v128.load32_splat`: a load, no ALU op): i16
 * lanes 2r, 2r + 1 of every product belong to row r, so four dots add in i16 (each lane ≤ 4·2·31·127 = 31496 < 2¹⁵)
 * and two pairwise widenings give [row 0, row 1, row 2, row 3] — no transpose-add per block. Four rows × eight tokens
 * per tile; at 4 tokens the per-call packing ate the gain, so n < 8 (and the builds without relaxed SIMD) run
 * gemv_q5_0. Q4_0, which took this path too, is stored in 4-row groups at load instead (gemv-stored-rows4.ts): its
 * unpacked layout is its own bytes, where Q5_0's would take 136 bytes per 88.
 */
import { gemv_q5_0 } from './gemv-q32';
import { q8RowBytes } from './q8-activations';
import { f16x4ToF32x4, fmaF32x4, hiNibbles, q5HighBits } from './simd-dot';

/** acc + d·(Σ q·qx·d_x − 16·s_x) for the unpacked block (l: elements 0…15, h: 16…31) of four rows and one token. */
// @ts-ignore: decorator
@inline function blockToken(
  acc: v128, l0: v128, l1: v128, l2: v128, l3: v128, h0: v128, h1: v128, h2: v128, h3: v128,
  d: v128, xb: usize, dx: usize, sx: usize,
): v128 {
  let s = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb), l0);
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 4), l1));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 8), l2));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 12), l3));
  let u = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 16), h0);
  u = i16x8.add(u, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 20), h1));
  u = i16x8.add(u, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 24), h2));
  u = i16x8.add(u, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 28), h3));
  // Quants ≤ 31: four dots per i16 sum (≤ 31496), two widenings.
  const w = i32x4.add(i32x4.extadd_pairwise_i16x8_s(s), i32x4.extadd_pairwise_i16x8_s(u));
  const q = f32x4.convert_i32x4_s(w);
  const t = fmaF32x4(f32x4.mul(v128.load32_splat(sx), f32x4.splat(-16)), q, v128.load32_splat(dx));
  return fmaF32x4(acc, t, d);
}

/** 4×4 transpose of 32-bit words: [a.wj, b.wj, c.wj, d.wj] stored at o + 16j for j < 4. */
// @ts-ignore: decorator
@inline function storeTransposed(o: usize, a: v128, b: v128, c: v128, d: v128): void {
  const t0 = i32x4.shuffle(a, b, 0, 4, 1, 5);
  const t1 = i32x4.shuffle(a, b, 2, 6, 3, 7);
  const t2 = i32x4.shuffle(c, d, 0, 4, 1, 5);
  const t3 = i32x4.shuffle(c, d, 2, 6, 3, 7);
  v128.store(o, i64x2.shuffle(t0, t2, 0, 2));
  v128.store(o, i64x2.shuffle(t0, t2, 1, 3), 16);
  v128.store(o, i64x2.shuffle(t1, t3, 0, 2), 32);
  v128.store(o, i64x2.shuffle(t1, t3, 1, 3), 48);
}

/** Quants 0…15 (half 0) or 16…31 (half 1) of the Q5_0 block at `pb`, 5th bit included (0…31). */
// @ts-ignore: decorator
@inline function q5Half(pb: usize, half: i32): v128 {
  const mask = i8x16.splat(0x0f);
  const v = v128.load(pb, 6);
  return v128.or(half == 0 ? v128.and(v, mask) : hiNibbles(v, mask), q5HighBits(load<u32>(pb, 2), half));
}

/**
 * Rearranges rows 4g … 4g + 3 — the stored row pairs at `wp` (pair 2g) and wp + 2·rowBytes (pair 2g + 1), blocks
 * alternating A_b, B_b — into the group layout at `dst`: per block (136 bytes) the four scales, then the quants
 * unpacked to bytes 0…31 (5th bit merged) as eight chunks, chunk j = elements 4j … 4j + 3 of rows 0…3, so the tile
 * only loads them.
 */
// @ts-ignore: decorator
@inline function packGroupQ5(wp: usize, rowBytes: usize, nb: i32, dst: usize): void {
  for (let b = 0; b < nb; b++) {
    const p0 = wp + <usize>b * 44;
    const p1 = p0 + (rowBytes << 1);
    const o = dst + <usize>b * 136;
    store<u16>(o, load<u16>(p0));
    store<u16>(o, load<u16>(p0, 22), 2);
    store<u16>(o, load<u16>(p1), 4);
    store<u16>(o, load<u16>(p1, 22), 6);
    storeTransposed(o + 8, q5Half(p0, 0), q5Half(p0 + 22, 0), q5Half(p1, 0), q5Half(p1 + 22, 0));
    storeTransposed(o + 72, q5Half(p0, 1), q5Half(p0 + 22, 1), q5Half(p1, 1), q5Half(p1 + 22, 1));
  }
}

/** The four f16 scales of a group's block at `pb` → f32x4. */
// @ts-ignore: decorator
@inline function scales4(pb: usize): v128 {
  return f16x4ToF32x4(i32x4.extend_low_i16x8_u(v128.load64_zero(pb)));
}

/**
 * One tile: the packed 4-row group at `wg` · nTok (4 or 8, a constant after inlining) tokens' Q8 rows from x0 →
 * out rows o, o + osb, … (four consecutive f32 each); every block unpacked once for all the tile's tokens.
 */
// @ts-ignore: decorator
@inline function tileRows4(wg: usize, x0: usize, xrb: usize, nb: i32, k: i32, o: usize, osb: usize, nTok: i32): void {
  const xd = x0 + <usize>k;
  const xs = xd + (<usize>nb << 2);
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let a4 = f32x4.splat(0), a5 = f32x4.splat(0), a6 = f32x4.splat(0), a7 = f32x4.splat(0);
  for (let b = 0; b < nb; b++) {
    const pb = wg + <usize>b * 136;
    const d = scales4(pb);
    const l0 = v128.load(pb, 8), l1 = v128.load(pb, 24), l2 = v128.load(pb, 40), l3 = v128.load(pb, 56);
    const h0 = v128.load(pb, 72), h1 = v128.load(pb, 88), h2 = v128.load(pb, 104), h3 = v128.load(pb, 120);
    const xo = <usize>b << 5;
    const so = <usize>b << 2;
    a0 = blockToken(a0, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + xo, xd + so, xs + so);
    a1 = blockToken(a1, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + xrb + xo, xd + xrb + so, xs + xrb + so);
    a2 = blockToken(a2, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + 2 * xrb + xo, xd + 2 * xrb + so, xs + 2 * xrb + so);
    a3 = blockToken(a3, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + 3 * xrb + xo, xd + 3 * xrb + so, xs + 3 * xrb + so);
    if (nTok == 8) {
      a4 = blockToken(a4, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + 4 * xrb + xo, xd + 4 * xrb + so, xs + 4 * xrb + so);
      a5 = blockToken(a5, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + 5 * xrb + xo, xd + 5 * xrb + so, xs + 5 * xrb + so);
      a6 = blockToken(a6, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + 6 * xrb + xo, xd + 6 * xrb + so, xs + 6 * xrb + so);
      a7 = blockToken(a7, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + 7 * xrb + xo, xd + 7 * xrb + so, xs + 7 * xrb + so);
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
 * Q5_0 weights (row-pair layout) · n Q8 activation rows → out f32 [n, outStride], rows r0 … r1−1, as gemv_q5_0 but
 * (n ≥ 8) with scratch for the packed groups at x + n·q8RowBytes(k) (group g at g·(k/32)·136 bytes in, so threads'
 * row ranges never share scratch). Whole 4-row groups inside r0 … r1 take the 4-row tiles for their first n & ~3
 * tokens; the rows before and after them and the last n % 4 tokens go through the row-pair kernel.
 */
// @ts-ignore: decorator
@inline function gemvRows4(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  const g0 = (r0 + 3) >> 2;
  const g1 = r1 >> 2;
  if (!ASC_FEATURE_RELAXED_SIMD || n < 8 || g0 >= g1) {
    gemv_q5_0(w, x, out, k, r0, r1, n, outStride);
    return;
  }
  const nb = k >> 5;
  const rowBytes = <usize>nb * 22;
  const xrb = q8RowBytes(k);
  const scratch = x + <usize>n * xrb;
  const gb = <usize>nb * 136;
  const osb = <usize>outStride << 2;
  const tiled = n & ~3;
  if (r0 < g0 << 2) gemv_q5_0(w, x, out, k, r0, g0 << 2, n, outStride);
  if (g1 << 2 < r1) gemv_q5_0(w, x, out, k, g1 << 2, r1, n, outStride);
  for (let g = g0; g < g1; g++) {
    const wg = scratch + <usize>g * gb;
    packGroupQ5(w + <usize>(g << 2) * rowBytes, rowBytes, nb, wg);
    for (let t = 0; t < tiled; ) {
      const o = out + ((<usize>t * <usize>outStride + <usize>(g << 2)) << 2);
      if (t + 8 <= tiled) {
        tileRows4(wg, x + <usize>t * xrb, xrb, nb, k, o, osb, 8);
        t += 8;
      } else {
        tileRows4(wg, x + <usize>t * xrb, xrb, nb, k, o, osb, 4);
        t += 4;
      }
    }
  }
  if (tiled < n) {
    const xt = x + <usize>tiled * xrb;
    gemv_q5_0(w, xt, out + (<usize>tiled * <usize>outStride << 2), k, g0 << 2, g1 << 2, n - tiled, outStride);
  }
}

/** Q5_0 through 4-row tiles for n ≥ 8 (see gemvRows4); scratch rows4Kernel(Q5_0).scratch after the n Q8 rows. */
export function gemv_q5_0_rows4(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  gemvRows4(w, x, out, k, r0, r1, n, outStride);
}
