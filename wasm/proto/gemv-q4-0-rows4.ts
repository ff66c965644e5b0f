/**
 * PROTOTYPE (relaxed-SIMD build only): Q4_0 in 4-row groups, lanes = rows — the layout llama.cpp's CPU "repack"
 * kernels use (there 8 rows × 8 bytes for AVX2). Per block of a group: 4 f16 scales (rows 0…3, 8 bytes), then four
 * 16-byte chunks, chunk j = the quant bytes 4j … 4j + 3 of rows 0, 1, 2, 3 (72 bytes per block, 4 rows).
 * One token's block is then 8 `i16x8.relaxed_dot_i8x16_i7x16_s` of a chunk's nibbles against four activation bytes
 * splatted to every lane (`v128.load32_splat`, a load, no ALU op): i16 lane 2r, 2r + 1 of every product belongs to
 * row r, so the eight dots add in i16 (each lane ≤ 8·2·15·127 = 30480 < 2¹⁵) and ONE pairwise widening gives
 * [row 0, row 1, row 2, row 3] — no transpose-add per block at all (the row-pair tile spends 10 of its ~33 ALU ops
 * per 128 multiply-adds on it). Scales apply as one f32x4 (four rows' d_w) per block and token.
 * Measured (test/bench/rows4-proto.bench.ts, 4864×896): four rows × eight tokens per tile 1.5× the row-pair tile's
 * multiply-adds per CPU-second at 32 tokens (58 vs 39 GMAC/CPU-s), four × four 1.13–1.3× at 4 tokens, equal at one. Not wired into the backend: the layout has to replace the row pairs everywhere a Q4_0
 * matrix is read (decode, thread chunks on 4-row boundaries, nRows % 4 tails, embedding row lookups, streaming).
 */
import { q8RowBytes } from '../assembly/q8-activations';
import { f16x4ToF32x4, fmaF32x4, hiNibbles } from '../assembly/simd-dot';

/** acc + d·(Σ q·qx·d_x − 8·s_x) for the unpacked block (l: low nibbles, h: high) of four rows and one token. */
// @ts-ignore: decorator
@inline function blockToken(
  acc: v128, l0: v128, l1: v128, l2: v128, l3: v128, h0: v128, h1: v128, h2: v128, h3: v128,
  d: v128, xb: usize, dx: usize, sx: usize,
): v128 {
  let s = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb), l0);
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 4), l1));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 8), l2));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 12), l3));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 16), h0));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 20), h1));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 24), h2));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(xb, 28), h3));
  const q = f32x4.convert_i32x4_s(i32x4.extadd_pairwise_i16x8_s(s));
  const t = fmaF32x4(f32x4.mul(v128.load32_splat(sx), f32x4.splat(-8)), q, v128.load32_splat(dx));
  return fmaF32x4(acc, t, d);
}

/** The four f16 scales of a group's block at `pb` → f32x4. */
// @ts-ignore: decorator
@inline function scales4(pb: usize): v128 {
  return f16x4ToF32x4(i32x4.extend_low_i16x8_u(v128.load64_zero(pb)));
}

/**
 * One tile: the 4-row group at `wg` · nTok (4 or 8, a constant after inlining) tokens' Q8 rows from x0 → out rows
 * o, o + osb, …; each block unpacked once for all the tile's tokens.
 */
// @ts-ignore: decorator
@inline function tileRows4(wg: usize, x0: usize, xrb: usize, nb: i32, k: i32, o: usize, osb: usize, nTok: i32): void {
  const mask = i8x16.splat(0x0f);
  const xd = x0 + <usize>k;
  const xs = xd + (<usize>nb << 2);
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let a4 = f32x4.splat(0), a5 = f32x4.splat(0), a6 = f32x4.splat(0), a7 = f32x4.splat(0);
  for (let b = 0; b < nb; b++) {
    const pb = wg + <usize>b * 72;
    const d = scales4(pb);
    const v0 = v128.load(pb, 8), v1 = v128.load(pb, 24), v2 = v128.load(pb, 40), v3 = v128.load(pb, 56);
    const l0 = v128.and(v0, mask), l1 = v128.and(v1, mask), l2 = v128.and(v2, mask), l3 = v128.and(v3, mask);
    const h0 = hiNibbles(v0, mask), h1 = hiNibbles(v1, mask), h2 = hiNibbles(v2, mask), h3 = hiNibbles(v3, mask);
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
 * 4-row groups g0 … g1−1 of the rows4 layout at `w` · n Q8 activation rows (n % 4 == 0) → out f32 [n, outStride]:
 * four rows × eight tokens per tile (four rows × four for a last group of four tokens).
 */
export function gemv_q4_0_rows4(w: usize, x: usize, out: usize, k: i32, g0: i32, g1: i32, n: i32, outStride: i32): void {
  const nb = k >> 5;
  const xrb = q8RowBytes(k);
  const gb = <usize>nb * 72;
  const osb = <usize>outStride << 2;
  for (let t = 0; t + 4 <= n; ) {
    const x0 = x + <usize>t * xrb;
    const wide = t + 8 <= n;
    for (let g = g0; g < g1; g++) {
      const o = out + ((<usize>t * <usize>outStride + <usize>(g << 2)) << 2);
      if (wide) tileRows4(w + <usize>g * gb, x0, xrb, nb, k, o, osb, 8);
      else tileRows4(w + <usize>g * gb, x0, xrb, nb, k, o, osb, 4);
    }
    t += wide ? 8 : 4;
  }
}

/** One token (decode) over 4-row groups g0 … g1−1 (nb even): two blocks per step into two accumulators. */
export function gemv_q4_0_rows4_one(w: usize, x: usize, out: usize, k: i32, g0: i32, g1: i32, n: i32, outStride: i32): void {
  const nb = k >> 5;
  const mask = i8x16.splat(0x0f);
  const gb = <usize>nb * 72;
  const xd = x + <usize>k;
  const xs = xd + (<usize>nb << 2);
  for (let g = g0; g < g1; g++) {
    const wg = w + <usize>g * gb;
    let a0 = f32x4.splat(0), a1 = f32x4.splat(0);
    for (let b = 0; b + 2 <= nb; b += 2) {
      const pb = wg + <usize>b * 72;
      const v0 = v128.load(pb, 8), v1 = v128.load(pb, 24), v2 = v128.load(pb, 40), v3 = v128.load(pb, 56);
      a0 = blockToken(
        a0, v128.and(v0, mask), v128.and(v1, mask), v128.and(v2, mask), v128.and(v3, mask),
        hiNibbles(v0, mask), hiNibbles(v1, mask), hiNibbles(v2, mask), hiNibbles(v3, mask),
        scales4(pb), x + (<usize>b << 5), xd + (<usize>b << 2), xs + (<usize>b << 2),
      );
      const pc = pb + 72;
      const u0 = v128.load(pc, 8), u1 = v128.load(pc, 24), u2 = v128.load(pc, 40), u3 = v128.load(pc, 56);
      a1 = blockToken(
        a1, v128.and(u0, mask), v128.and(u1, mask), v128.and(u2, mask), v128.and(u3, mask),
        hiNibbles(u0, mask), hiNibbles(u1, mask), hiNibbles(u2, mask), hiNibbles(u3, mask),
        scales4(pc), x + (<usize>(b + 1) << 5), xd + (<usize>(b + 1) << 2), xs + (<usize>(b + 1) << 2),
      );
    }
    v128.store(out + (<usize>(g << 2) << 2), f32x4.add(a0, a1));
  }
}
