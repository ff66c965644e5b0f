/**
 * Decode (one token) row dots for Q4_0, Q5_0 and Q8_0 — a Q4_0 model's matrices and its tied output matrix, and
 * Q4_K_M's fallback for rows that are not a multiple of 256. The integer
 * dots of several 32-element blocks are added lane-wise into one vector (lane = block) before a single int→float
 * conversion and one fused multiply-add with those blocks' d_w·d_x; f16 scales convert as vectors. V8 schedules every
 * load of a loop body first, so steps are sized to keep the live vectors within x64's 16 registers. Q4_0, Q5_0 and
 * Q8_0 take a stored row pair at once (row-pair layout: rows A and B alternate block by block, so both are one memory
 * stream, and each activation load serves two rows); Q8_0 uses the relaxed i8·i7 dot through a sign split of the
 * activations.
 * SIMD builds only (gemv-q32.ts keeps the scalar path).
 */
import { dot2U4I8I16, dot2U7I8, dotI8I8, f16x4ToF32x4, fmaF32x4, hiNibbles, hsum4I16, hsum4I32, hsumF32x4, hsumI32x4, loadF16, q5HighBits } from './simd-dot';

/** i16x8 lanes summing to Σ q·qx of the Q4_0 block at `wb` (quants 2 bytes in) against activations x0 | x1. */
// @ts-ignore: decorator
@inline function blockQ4(wb: usize, x0: v128, x1: v128, mask: v128): v128 {
  const v = v128.load(wb, 2);
  return dot2U4I8I16(v128.and(v, mask), x0, hiNibbles(v, mask), x1);
}

/** i32x4 partial sums of Σ q·qx of the Q5_0 block at `wb` (f16 d, u32 qh, 16 nibble bytes) against x0 | x1. */
// @ts-ignore: decorator
@inline function blockQ5(wb: usize, x0: v128, x1: v128, mask: v128): v128 {
  const v = v128.load(wb, 6);
  const qh = load<u32>(wb, 2);
  return dot2U7I8(v128.or(v128.and(v, mask), q5HighBits(qh, 0)), x0, v128.or(hiNibbles(v, mask), q5HighBits(qh, 1)), x1);
}

/** Block dot of kind 0 (Q4_0: i16x8 lanes) or 2 (Q5_0: i32x4 lanes). */
// @ts-ignore: decorator
@inline function blockQ45(wb: usize, x0: v128, x1: v128, mask: v128, kind: i32): v128 {
  return kind == 0 ? blockQ4(wb, x0, x1, mask) : blockQ5(wb, x0, x1, mask);
}

/** [Σ a, Σ b, Σ c, Σ d] of four blockQ45 results as i32x4. */
// @ts-ignore: decorator
@inline function hsum4Q45(a: v128, b: v128, c: v128, d: v128, kind: i32): v128 {
  return kind == 0 ? hsum4I16(a, b, c, d) : hsum4I32(a, b, c, d);
}

/**
 * Scales [A_b, A_b+1, B_b, B_b+1] → f32x4 of the four interleaved blocks A_b B_b A_b+1 B_b+1 (`bb` bytes each, f16
 * scale first) at `p`.
 */
// @ts-ignore: decorator
@inline function scalesPair(p: usize, bb: usize): v128 {
  let h = v128.load16_lane(p, i32x4.splat(0), 0);
  h = v128.load16_lane(p + 2 * bb, h, 2);
  h = v128.load16_lane(p + bb, h, 4);
  h = v128.load16_lane(p + 3 * bb, h, 6);
  return f16x4ToF32x4(h);
}

/**
 * The stored Q4_0 (kind 0) or Q5_0 (kind 2) row pair at `w` (rows A, B of nb blocks each, interleaved) · one Q8
 * activation row `xq` (k elements) → out[0] (A) and out[oStep] (B).
 * Each step takes two blocks of both rows, so one vector holds [A_b, A_b+1, B_b, B_b+1] throughout: one integer
 * transpose-add, one conversion, one scale vector and one fma per step, and few enough live vectors (x64 has 16)
 * that V8 spills little (four blocks per step of both rows spilled heavily and measured slower). Q4_0's four block
 * dots add in i16; Q5_0's quants (0…31) are too large for that, so each block's dot widens first. The −8 / −16
 * offset folds in as −offset·d_w·s per block (s = d_x·Σqx of the activation).
 */
// @ts-ignore: decorator
@inline export function rowPairQ45(w: usize, xq: usize, nb: i32, k: i32, out: usize, oStep: usize, kind: i32): void {
  const bb: usize = kind == 0 ? 18 : 22; // block bytes
  const offset: f32 = kind == 0 ? 8 : 16;
  const mask = i8x16.splat(0x0f);
  const xd = xq + <usize>k; // f32 [nb] activation scales, then f32 [nb] sums s
  const xs = xd + (<usize>nb << 2);
  let acc = f32x4.splat(0); // lanes 0, 1: row A; 2, 3: row B
  let cor = f32x4.splat(0);
  let b = 0;
  for (; b + 2 <= nb; b += 2) {
    const pa = w + <usize>b * 2 * bb; // A_b, then B_b, A_b+1, B_b+1
    const xb = xq + (<usize>b << 5);
    const x0 = v128.load(xb), x1 = v128.load(xb, 16), x2 = v128.load(xb, 32), x3 = v128.load(xb, 48);
    const p = hsum4Q45(
      blockQ45(pa, x0, x1, mask, kind), blockQ45(pa + 2 * bb, x2, x3, mask, kind),
      blockQ45(pa + bb, x0, x1, mask, kind), blockQ45(pa + 3 * bb, x2, x3, mask, kind), kind,
    );
    const d = scalesPair(pa, bb);
    const so = <usize>b << 2;
    acc = fmaF32x4(acc, f32x4.convert_i32x4_s(p), f32x4.mul(d, v128.load64_splat(xd + so)));
    cor = fmaF32x4(cor, d, v128.load64_splat(xs + so));
  }
  const r = f32x4.sub(acc, f32x4.mul(cor, f32x4.splat(offset)));
  let ra = f32x4.extract_lane(r, 0) + f32x4.extract_lane(r, 1);
  let rb = f32x4.extract_lane(r, 2) + f32x4.extract_lane(r, 3);
  if (b < nb) {
    const pa = w + <usize>b * 2 * bb;
    const pb = pa + bb;
    const xb = xq + (<usize>b << 5);
    const x0 = v128.load(xb), x1 = v128.load(xb, 16);
    const zero = i32x4.splat(0);
    const p = hsum4Q45(blockQ45(pa, x0, x1, mask, kind), zero, blockQ45(pb, x0, x1, mask, kind), zero, kind);
    const dx = load<f32>(xd + (<usize>b << 2));
    const sx = load<f32>(xs + (<usize>b << 2));
    const da = loadF16(pa), db = loadF16(pb);
    ra += <f32>i32x4.extract_lane(p, 0) * (da * dx) - offset * da * sx;
    rb += <f32>i32x4.extract_lane(p, 2) * (db * dx) - offset * db * sx;
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
 * Q8_0 row `wa` (nb blocks, `stride` bytes apart) · one Q8 activation row `xq` (k elements). Two blocks per step:
 * their i32x4 partial sums interleave-add into lanes [b, b + 1, b, b + 1], converted once and scaled by
 * [d_b, d_b+1, …]·d_x. For a thread chunk's unpaired first or last row (rowPairQ8_0 does the rest).
 */
// @ts-ignore: decorator
@inline export function rowQ8_0(wa: usize, xq: usize, nb: i32, k: i32, stride: usize): f32 {
  const xd = xq + <usize>k;
  let acc = f32x4.splat(0);
  let b = 0;
  for (; b + 2 <= nb; b += 2) {
    const pa = wa + <usize>b * stride;
    const pn = pa + stride;
    const xb = xq + (<usize>b << 5);
    const p0 = i32x4.add(dotI8Q8(v128.load(pa, 2), v128.load(xb)), dotI8Q8(v128.load(pa, 18), v128.load(xb, 16)));
    const p1 = i32x4.add(dotI8Q8(v128.load(pn, 2), v128.load(xb, 32)), dotI8Q8(v128.load(pn, 18), v128.load(xb, 48)));
    const p = i32x4.add(i32x4.shuffle(p0, p1, 0, 4, 1, 5), i32x4.shuffle(p0, p1, 2, 6, 3, 7)); // [b, b+1, b, b+1]
    let h = v128.load16_lane(pa, i32x4.splat(0), 0);
    h = v128.load16_lane(pn, h, 2);
    const d = f16x4ToF32x4(i32x4.shuffle(h, h, 0, 1, 0, 1));
    acc = fmaF32x4(acc, f32x4.convert_i32x4_s(p), f32x4.mul(d, v128.load64_splat(xd + (<usize>b << 2))));
  }
  let r = hsumF32x4(acc);
  if (b < nb) {
    const pa = wa + <usize>b * stride;
    const xb = xq + (<usize>b << 5);
    const p = i32x4.add(dotI8Q8(v128.load(pa, 2), v128.load(xb)), dotI8Q8(v128.load(pa, 18), v128.load(xb, 16)));
    r += <f32>hsumI32x4(p) * (loadF16(pa) * load<f32>(xd + (<usize>b << 2)));
  }
  return r;
}

/**
 * One token's step of tile4PairQ45: the four unpacked blocks [A_b, A_b+1, B_b, B_b+1] (low- and high-half quants)
 * against that token's activation blocks b, b + 1 at `xb`; returns acc + d·(Σq·qx·d_x − offset·s) lane-wise (d = the
 * four blocks' scales). Q4_0's dots add in i16 (dot2U4I8I16), Q5_0's widen first (dot2U7I8), as in rowPairQ45.
 */
// @ts-ignore: decorator
@inline function stepTokenQ45(
  acc: v128, la0: v128, ha0: v128, la1: v128, ha1: v128, lb0: v128, hb0: v128, lb1: v128, hb1: v128,
  xb: usize, xd: usize, xs: usize, d: v128, kind: i32,
): v128 {
  const x0 = v128.load(xb), x1 = v128.load(xb, 16), x2 = v128.load(xb, 32), x3 = v128.load(xb, 48);
  const p = kind == 0
    ? hsum4I16(dot2U4I8I16(la0, x0, ha0, x1), dot2U4I8I16(la1, x2, ha1, x3), dot2U4I8I16(lb0, x0, hb0, x1), dot2U4I8I16(lb1, x2, hb1, x3))
    : hsum4I32(dot2U7I8(la0, x0, ha0, x1), dot2U7I8(la1, x2, ha1, x3), dot2U7I8(lb0, x0, hb0, x1), dot2U7I8(lb1, x2, hb1, x3));
  const t = fmaF32x4(f32x4.mul(v128.load64_splat(xs), f32x4.splat(kind == 0 ? -8 : -16)), f32x4.convert_i32x4_s(p), v128.load64_splat(xd));
  return fmaF32x4(acc, t, d);
}

/** Low-nibble (half 0) or high-nibble (half 1) quants of the Q4_0 / Q5_0 block at `wb`, with Q5_0's 5th bit. */
// @ts-ignore: decorator
@inline function quants45(wb: usize, half: i32, mask: v128, kind: i32): v128 {
  const v = v128.load(wb + <usize>(kind == 0 ? 2 : 6));
  const q = half == 0 ? v128.and(v, mask) : hiNibbles(v, mask);
  return kind == 0 ? q : v128.or(q, q5HighBits(load<u32>(wb, 2), half));
}

/**
 * Prefill tile: the stored Q4_0 (kind 0) or Q5_0 (kind 2) row pair at `w` (rows A, B; see rowPairQ45) · four Q8
 * activation rows (xq, xq + xrb, …) → out[t·osb] (row A) and out[t·osb + 4] (row B) for t < 4. Each step unpacks two
 * blocks of both rows once and runs them against every token as rowPairQ45 does against one (one transpose-add, one
 * conversion and two fused multiply-adds per token and step, the offset folded in per block), instead of the
 * per-token scalar scale work of a one-row tile.
 */
// @ts-ignore: decorator
@inline export function tile4PairQ45(w: usize, xq: usize, xrb: usize, nb: i32, k: i32, out: usize, osb: usize, kind: i32): void {
  const bb: usize = kind == 0 ? 18 : 22; // block bytes
  const offset: f32 = kind == 0 ? 8 : 16;
  const mask = i8x16.splat(0x0f);
  const xd = xq + <usize>k; // token t's block scales at xd + t·xrb, sums nb·4 bytes after them
  const xs = xd + (<usize>nb << 2);
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let b = 0;
  for (; b + 2 <= nb; b += 2) {
    const pa = w + <usize>b * 2 * bb; // A_b, B_b, A_b+1, B_b+1
    const la0 = quants45(pa, 0, mask, kind), ha0 = quants45(pa, 1, mask, kind);
    const lb0 = quants45(pa + bb, 0, mask, kind), hb0 = quants45(pa + bb, 1, mask, kind);
    const la1 = quants45(pa + 2 * bb, 0, mask, kind), ha1 = quants45(pa + 2 * bb, 1, mask, kind);
    const lb1 = quants45(pa + 3 * bb, 0, mask, kind), hb1 = quants45(pa + 3 * bb, 1, mask, kind);
    const d = scalesPair(pa, bb);
    const xo = <usize>b << 5;
    const so = <usize>b << 2;
    a0 = stepTokenQ45(a0, la0, ha0, la1, ha1, lb0, hb0, lb1, hb1, xq + xo, xd + so, xs + so, d, kind);
    a1 = stepTokenQ45(a1, la0, ha0, la1, ha1, lb0, hb0, lb1, hb1, xq + xrb + xo, xd + xrb + so, xs + xrb + so, d, kind);
    a2 = stepTokenQ45(a2, la0, ha0, la1, ha1, lb0, hb0, lb1, hb1, xq + 2 * xrb + xo, xd + 2 * xrb + so, xs + 2 * xrb + so, d, kind);
    a3 = stepTokenQ45(a3, la0, ha0, la1, ha1, lb0, hb0, lb1, hb1, xq + 3 * xrb + xo, xd + 3 * xrb + so, xs + 3 * xrb + so, d, kind);
  }
  let r0a = f32x4.extract_lane(a0, 0) + f32x4.extract_lane(a0, 1), r0b = f32x4.extract_lane(a0, 2) + f32x4.extract_lane(a0, 3);
  let r1a = f32x4.extract_lane(a1, 0) + f32x4.extract_lane(a1, 1), r1b = f32x4.extract_lane(a1, 2) + f32x4.extract_lane(a1, 3);
  let r2a = f32x4.extract_lane(a2, 0) + f32x4.extract_lane(a2, 1), r2b = f32x4.extract_lane(a2, 2) + f32x4.extract_lane(a2, 3);
  let r3a = f32x4.extract_lane(a3, 0) + f32x4.extract_lane(a3, 1), r3b = f32x4.extract_lane(a3, 2) + f32x4.extract_lane(a3, 3);
  if (b < nb) {
    // Odd block count: the last block of both rows, token by token.
    const pa = w + <usize>b * 2 * bb;
    const pb = pa + bb;
    const da = loadF16(pa), db = loadF16(pb);
    const zero = i32x4.splat(0);
    for (let t = 0; t < 4; t++) {
      const xb = xq + <usize>t * xrb + (<usize>b << 5);
      const x0 = v128.load(xb), x1 = v128.load(xb, 16);
      const p = hsum4Q45(blockQ45(pa, x0, x1, mask, kind), zero, blockQ45(pb, x0, x1, mask, kind), zero, kind);
      const dx = load<f32>(xd + <usize>t * xrb + (<usize>b << 2));
      const sx = load<f32>(xs + <usize>t * xrb + (<usize>b << 2));
      const ra = da * (<f32>i32x4.extract_lane(p, 0) * dx - offset * sx);
      const rb = db * (<f32>i32x4.extract_lane(p, 2) * dx - offset * sx);
      if (t == 0) { r0a += ra; r0b += rb; } else if (t == 1) { r1a += ra; r1b += rb; } else if (t == 2) { r2a += ra; r2b += rb; } else { r3a += ra; r3b += rb; }
    }
  }
  store<f32>(out, r0a);
  store<f32>(out, r0b, 4);
  store<f32>(out + osb, r1a);
  store<f32>(out + osb, r1b, 4);
  store<f32>(out + 2 * osb, r2a);
  store<f32>(out + 2 * osb, r2b, 4);
  store<f32>(out + 3 * osb, r3a);
  store<f32>(out + 3 * osb, r3b, 4);
}

/** i32x4 partial sums of the Q8_0 block at `w` · the sign-split activation halves xp0|xp1, xn0|xn1 (see dotI8Q8). */
// @ts-ignore: decorator
@inline function blockQ8Split(w: usize, xp0: v128, xn0: v128, xp1: v128, xn1: v128): v128 {
  const w0 = v128.load(w, 2), w1 = v128.load(w, 18);
  return i32x4.add(
    i32x4.extadd_pairwise_i16x8_s(i16x8.sub(i16x8.relaxed_dot_i8x16_i7x16_s(w0, xp0), i16x8.relaxed_dot_i8x16_i7x16_s(w0, xn0))),
    i32x4.extadd_pairwise_i16x8_s(i16x8.sub(i16x8.relaxed_dot_i8x16_i7x16_s(w1, xp1), i16x8.relaxed_dot_i8x16_i7x16_s(w1, xn1))),
  );
}

/**
 * The stored Q8_0 row pair at `w` (rows A, B of nb blocks, interleaved) · one Q8 activation row → out[0], out[oStep].
 * Relaxed build only. One block per step: the activation's sign split serves both rows, their partial sums
 * interleave-add into [A, B, A, B], then one conversion and one fused multiply-add by [d_A, d_B, d_A, d_B]·d_x.
 */
// @ts-ignore: decorator
@inline export function rowPairQ8_0(w: usize, xq: usize, nb: i32, k: i32, out: usize, oStep: usize): void {
  const xd = xq + <usize>k;
  const zero = i32x4.splat(0);
  let acc = f32x4.splat(0);
  for (let b = 0; b < nb; b++) {
    const pa = w + <usize>b * 68; // A_b, then B_b
    const xb = xq + (<usize>b << 5);
    const x0 = v128.load(xb), x1 = v128.load(xb, 16);
    const xp0 = i8x16.max_s(x0, zero), xp1 = i8x16.max_s(x1, zero);
    const xn0 = i8x16.sub(xp0, x0), xn1 = i8x16.sub(xp1, x1);
    const qa = blockQ8Split(pa, xp0, xn0, xp1, xn1);
    const qb = blockQ8Split(pa + 34, xp0, xn0, xp1, xn1);
    const p = i32x4.add(i32x4.shuffle(qa, qb, 0, 4, 1, 5), i32x4.shuffle(qa, qb, 2, 6, 3, 7)); // [A, B, A, B]
    let h = v128.load16_lane(pa, zero, 0);
    h = v128.load16_lane(pa + 34, h, 2);
    const d = f16x4ToF32x4(i32x4.shuffle(h, h, 0, 1, 0, 1));
    acc = fmaF32x4(acc, f32x4.convert_i32x4_s(p), f32x4.mul(d, v128.load32_splat(xd + (<usize>b << 2))));
  }
  store<f32>(out, f32x4.extract_lane(acc, 0) + f32x4.extract_lane(acc, 2));
  store<f32>(out + oStep, f32x4.extract_lane(acc, 1) + f32x4.extract_lane(acc, 3));
}
