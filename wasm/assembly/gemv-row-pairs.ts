/**
 * Decode (one token) row dots for Q4_0 and Q8_0 — the matrices of a Q4_0 model and its tied output matrix. The integer
 * dots of several 32-element blocks are added lane-wise into one vector (lane = block) before a single int→float
 * conversion and one fused multiply-add with those blocks' d_w·d_x; f16 scales convert as vectors. V8 schedules every
 * load of a loop body first, so steps are sized to keep the live vectors within x64's 16 registers. Q4_0 takes two
 * short rows at once (shared activation loads; see PAIR_MAX_K in gemv-q32.ts); Q8_0 uses the relaxed i8·i7 dot through
 * a sign split of the activations.
 * SIMD builds only (gemv-q32.ts keeps the scalar path).
 */
import { dot2U4I8I16, dotI8I8, f16x4ToF32x4, fmaF32x4, hiNibbles, hsum4I16, hsumF32x4, hsumI32x4, loadF16 } from './simd-dot';

/** i16x8 lanes summing to Σ q·qx of the Q4_0 block at `wb` (quants 2 bytes in) against activations x0 | x1. */
// @ts-ignore: decorator
@inline function blockQ4(wb: usize, x0: v128, x1: v128, mask: v128): v128 {
  const v = v128.load(wb, 2);
  return dot2U4I8I16(v128.and(v, mask), x0, hiNibbles(v, mask), x1);
}

/** Four f16 at a, a + 18, b, b + 18 (two consecutive Q4_0 block scales of rows a and b) → f32x4. */
// @ts-ignore: decorator
@inline function scalesQ4Pair(a: usize, b: usize): v128 {
  let h = v128.load16_lane(a, i32x4.splat(0), 0);
  h = v128.load16_lane(a + 18, h, 2);
  h = v128.load16_lane(b, h, 4);
  h = v128.load16_lane(b + 18, h, 6);
  return f16x4ToF32x4(h);
}

/**
 * Q4_0 rows `wa` and `wb` (nb blocks each) · one Q8 activation row `xq` (k elements) → out[0] and out[oStep].
 * Each step takes two blocks of both rows, so one vector holds [A_b, A_b+1, B_b, B_b+1] throughout: one integer
 * transpose-add, one conversion, one scale vector and one fma per step, and few enough live vectors (x64 has 16)
 * that V8 spills little (four blocks per step of both rows spilled heavily and measured slower). The −8 offset folds
 * in as −8·d_w·s per block (s = d_x·Σqx of the activation).
 */
// @ts-ignore: decorator
@inline export function rowPairQ4_0(wa: usize, wb: usize, xq: usize, nb: i32, k: i32, out: usize, oStep: usize): void {
  const mask = i8x16.splat(0x0f);
  const xd = xq + <usize>k; // f32 [nb] activation scales, then f32 [nb] sums s
  const xs = xd + (<usize>nb << 2);
  let acc = f32x4.splat(0); // lanes 0, 1: row A; 2, 3: row B
  let cor = f32x4.splat(0);
  let b = 0;
  for (; b + 2 <= nb; b += 2) {
    const pa = wa + <usize>b * 18;
    const pb = wb + <usize>b * 18;
    const xb = xq + (<usize>b << 5);
    const x0 = v128.load(xb), x1 = v128.load(xb, 16), x2 = v128.load(xb, 32), x3 = v128.load(xb, 48);
    const p = hsum4I16(blockQ4(pa, x0, x1, mask), blockQ4(pa + 18, x2, x3, mask), blockQ4(pb, x0, x1, mask), blockQ4(pb + 18, x2, x3, mask));
    const d = scalesQ4Pair(pa, pb);
    const so = <usize>b << 2;
    acc = fmaF32x4(acc, f32x4.convert_i32x4_s(p), f32x4.mul(d, v128.load64_splat(xd + so)));
    cor = fmaF32x4(cor, d, v128.load64_splat(xs + so));
  }
  const r = f32x4.sub(acc, f32x4.mul(cor, f32x4.splat(8)));
  let ra = f32x4.extract_lane(r, 0) + f32x4.extract_lane(r, 1);
  let rb = f32x4.extract_lane(r, 2) + f32x4.extract_lane(r, 3);
  if (b < nb) {
    const pa = wa + <usize>b * 18;
    const pb = wb + <usize>b * 18;
    const xb = xq + (<usize>b << 5);
    const x0 = v128.load(xb), x1 = v128.load(xb, 16);
    const zero = i32x4.splat(0);
    const p = hsum4I16(blockQ4(pa, x0, x1, mask), zero, blockQ4(pb, x0, x1, mask), zero);
    const dx = load<f32>(xd + (<usize>b << 2));
    const sx = load<f32>(xs + (<usize>b << 2));
    const da = loadF16(pa), db = loadF16(pb);
    ra += <f32>i32x4.extract_lane(p, 0) * (da * dx) - 8 * da * sx;
    rb += <f32>i32x4.extract_lane(p, 2) * (db * dx) - 8 * db * sx;
  }
  store<f32>(out, ra);
  store<f32>(out + oStep, rb);
}

/**
 * i32x4 partial sums of 16 signed weights w · 16 activations x (|x| ≤ 127). Relaxed: x splits into xp = max(x, 0) and
 * xn = xp − x = max(−x, 0) (both 0…127, valid i7 operands) and two `i16x8.relaxed_dot_i8x16_i7x16_s` with w as the
 * i8 operand (exact: |pair sum| ≤ 2·128·127 < 2¹⁵) give w·xp − w·xn, the true pair sum, also < 2¹⁵ in magnitude, so
 * the wrapping i16 subtraction is exact for every weight byte, −128 included. simd128: widen both to i16.
 * (Storing xp/xn with the activation instead of splitting here measured slower: the extra loads cost more.)
 */
// @ts-ignore: decorator
@inline function dotI8Q8(w: v128, x: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) {
    const zero = i32x4.splat(0);
    const xp = i8x16.max_s(x, zero);
    const xn = i8x16.sub(xp, x);
    return i32x4.extadd_pairwise_i16x8_s(i16x8.sub(i16x8.relaxed_dot_i8x16_i7x16_s(w, xp), i16x8.relaxed_dot_i8x16_i7x16_s(w, xn)));
  } else {
    return dotI8I8(w, x);
  }
}

/**
 * Q8_0 row `wa` (nb blocks) · one Q8 activation row `xq` (k elements). Two blocks per step: their i32x4 partial sums
 * interleave-add into lanes [b, b + 1, b, b + 1], converted once and scaled by [d_b, d_b+1, …]·d_x. One row at a time:
 * on this output matrix (151936 rows, streamed from memory) pairing rows measured slower, unlike Q4_0.
 */
// @ts-ignore: decorator
@inline export function rowQ8_0(wa: usize, xq: usize, nb: i32, k: i32): f32 {
  const xd = xq + <usize>k;
  let acc = f32x4.splat(0);
  let b = 0;
  for (; b + 2 <= nb; b += 2) {
    const pa = wa + <usize>b * 34;
    const xb = xq + (<usize>b << 5);
    const p0 = i32x4.add(dotI8Q8(v128.load(pa, 2), v128.load(xb)), dotI8Q8(v128.load(pa, 18), v128.load(xb, 16)));
    const p1 = i32x4.add(dotI8Q8(v128.load(pa, 36), v128.load(xb, 32)), dotI8Q8(v128.load(pa, 52), v128.load(xb, 48)));
    const p = i32x4.add(i32x4.shuffle(p0, p1, 0, 4, 1, 5), i32x4.shuffle(p0, p1, 2, 6, 3, 7)); // [b, b+1, b, b+1]
    let h = v128.load16_lane(pa, i32x4.splat(0), 0);
    h = v128.load16_lane(pa + 34, h, 2);
    const d = f16x4ToF32x4(i32x4.shuffle(h, h, 0, 1, 0, 1));
    acc = fmaF32x4(acc, f32x4.convert_i32x4_s(p), f32x4.mul(d, v128.load64_splat(xd + (<usize>b << 2))));
  }
  let r = hsumF32x4(acc);
  if (b < nb) {
    const pa = wa + <usize>b * 34;
    const xb = xq + (<usize>b << 5);
    const p = i32x4.add(dotI8Q8(v128.load(pa, 2), v128.load(xb)), dotI8Q8(v128.load(pa, 18), v128.load(xb, 16)));
    r += <f32>hsumI32x4(p) * (loadF16(pa) * load<f32>(xd + (<usize>b << 2)));
  }
  return r;
}
