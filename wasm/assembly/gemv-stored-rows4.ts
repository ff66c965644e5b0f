/**
 * Q4_0 and Q8_0 matvecs over weights stored in 4-row groups (wasm/assembly/rows4-layout.ts), any token count: tiles
 * of four rows × 8, 4 or 1 tokens, lanes = rows. A token's block is one `i16x8.relaxed_dot_i8x16_i7x16_s` per 16-byte
 * chunk against four activation bytes splatted to every lane (`v128.load32_splat`: a load, no ALU op); i16 lanes
 * 2r, 2r + 1 belong to row r, so the sums need no transpose-add before the block's four scales (an f32x4).
 *  - Q4_0: the nibbles (0…15) are the i7 operand; eight dots add in i16 (≤ 8·2·15·127 = 30480 < 2¹⁵), one widening.
 *  - Q8_0: weights are signed, so the activations take the i7 slot split by sign, x = x⁺ − x⁻ (both 0…127: Q8
 *    activations are never −128), from `split_q8_signs` placed after the Q8 rows; per chunk w·x⁺ − w·x⁻ in i16
 *    (|·| ≤ 2·128·127 = 32512, so weights of −128 are exact too), widened, summed in i32.
 * Relaxed-SIMD builds only (the host stores this layout only there); other builds export the names as traps.
 */
import { q8RowBytes } from './q8-activations';
import { f16x4ToF32x4, fmaF32x4, hiNibbles } from './simd-dot';

/** The four f16 scales of a group's block at `pb` → f32x4. */
// @ts-ignore: decorator
@inline function scales4(pb: usize): v128 {
  return f16x4ToF32x4(i32x4.extend_low_i16x8_u(v128.load64_zero(pb)));
}

/** Q4_0: acc + d·(dx·Σ q·qx − 8·s_x) for one token; l*: low nibbles of chunks 0…3, h*: high (elements 16…31). */
// @ts-ignore: decorator
@inline function q4Token(
  acc: v128, l0: v128, l1: v128, l2: v128, l3: v128, h0: v128, h1: v128, h2: v128, h3: v128,
  d: v128, xb: usize, dx: usize, sx: usize,
): v128 {
  // Immediate load offsets (not `xb + 4`): V8 folds them into the address, an i32.add it cannot.
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

/** w·x⁺ − w·x⁻ of one chunk (xp, xn: four bytes splatted, 0…127: the i7 operand), widened to i32x4 (one per row). */
// @ts-ignore: decorator
@inline function signedChunk(c: v128, xp: v128, xn: v128): v128 {
  return i32x4.extadd_pairwise_i16x8_s(i16x8.sub(i16x8.relaxed_dot_i8x16_i7x16_s(c, xp), i16x8.relaxed_dot_i8x16_i7x16_s(c, xn)));
}

/** Q8_0: acc + d·dx·Σ q·qx for one token; xp: its 32 x⁺ bytes of the block, then its 32 x⁻. */
// @ts-ignore: decorator
@inline function q8Token(
  acc: v128, c0: v128, c1: v128, c2: v128, c3: v128, c4: v128, c5: v128, c6: v128, c7: v128,
  d: v128, xp: usize, dx: usize,
): v128 {
  let s = i32x4.add(signedChunk(c0, v128.load32_splat(xp), v128.load32_splat(xp, 32)), signedChunk(c1, v128.load32_splat(xp, 4), v128.load32_splat(xp, 36)));
  s = i32x4.add(s, i32x4.add(signedChunk(c2, v128.load32_splat(xp, 8), v128.load32_splat(xp, 40)), signedChunk(c3, v128.load32_splat(xp, 12), v128.load32_splat(xp, 44))));
  s = i32x4.add(s, i32x4.add(signedChunk(c4, v128.load32_splat(xp, 16), v128.load32_splat(xp, 48)), signedChunk(c5, v128.load32_splat(xp, 20), v128.load32_splat(xp, 52))));
  s = i32x4.add(s, i32x4.add(signedChunk(c6, v128.load32_splat(xp, 24), v128.load32_splat(xp, 56)), signedChunk(c7, v128.load32_splat(xp, 28), v128.load32_splat(xp, 60))));
  return fmaF32x4(acc, f32x4.mul(f32x4.convert_i32x4_s(s), v128.load32_splat(dx)), d);
}

/**
 * Stores `acc` (rows 4g … 4g + 3) at o, or with `masked` (a constant) only its lanes lo … hi−1. The masked form lives
 * in its own tile function: branches on lanes inside the full tiles cost them a third of their speed (V8).
 */
// @ts-ignore: decorator
@inline function storeRows(o: usize, acc: v128, masked: bool, lo: i32, hi: i32): void {
  if (!masked) {
    v128.store(o, acc);
    return;
  }
  if (lo <= 0 && 0 < hi) store<f32>(o, f32x4.extract_lane(acc, 0));
  if (lo <= 1 && 1 < hi) store<f32>(o, f32x4.extract_lane(acc, 1), 4);
  if (lo <= 2 && 2 < hi) store<f32>(o, f32x4.extract_lane(acc, 2), 8);
  if (lo <= 3 && 3 < hi) store<f32>(o, f32x4.extract_lane(acc, 3), 12);
}

/**
 * One tile: group `wg` · nTok (1, 4 or 8; a constant after inlining) tokens from token row x0 (Q8 rows xrb apart;
 * Q8_0's split rows at sp, 2k apart) → out rows o, o + osb, … (lanes lo … hi−1 of four consecutive f32 each).
 */
// @ts-ignore: decorator
@inline function tile(
  wg: usize, x0: usize, xrb: usize, sp: usize, nb: i32, k: i32, o: usize, osb: usize, nTok: i32, kind: i32, masked: bool, lo: i32, hi: i32,
): void {
  const mask = i8x16.splat(0x0f);
  const xd = x0 + <usize>k;
  const xs = xd + (<usize>nb << 2);
  const srb = <usize>k << 1;
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let a4 = f32x4.splat(0), a5 = f32x4.splat(0), a6 = f32x4.splat(0), a7 = f32x4.splat(0);
  for (let b = 0; b < nb; b++) {
    const so = <usize>b << 2;
    if (kind == 0) {
      const pb = wg + <usize>b * 72;
      const d = scales4(pb);
      const v0 = v128.load(pb, 8), v1 = v128.load(pb, 24), v2 = v128.load(pb, 40), v3 = v128.load(pb, 56);
      const l0 = v128.and(v0, mask), l1 = v128.and(v1, mask), l2 = v128.and(v2, mask), l3 = v128.and(v3, mask);
      const h0 = hiNibbles(v0, mask), h1 = hiNibbles(v1, mask), h2 = hiNibbles(v2, mask), h3 = hiNibbles(v3, mask);
      const xo = <usize>b << 5;
      a0 = q4Token(a0, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + xo, xd + so, xs + so);
      if (nTok >= 4) {
        a1 = q4Token(a1, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + xrb + xo, xd + xrb + so, xs + xrb + so);
        a2 = q4Token(a2, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + 2 * xrb + xo, xd + 2 * xrb + so, xs + 2 * xrb + so);
        a3 = q4Token(a3, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + 3 * xrb + xo, xd + 3 * xrb + so, xs + 3 * xrb + so);
      }
      if (nTok == 8) {
        a4 = q4Token(a4, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + 4 * xrb + xo, xd + 4 * xrb + so, xs + 4 * xrb + so);
        a5 = q4Token(a5, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + 5 * xrb + xo, xd + 5 * xrb + so, xs + 5 * xrb + so);
        a6 = q4Token(a6, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + 6 * xrb + xo, xd + 6 * xrb + so, xs + 6 * xrb + so);
        a7 = q4Token(a7, l0, l1, l2, l3, h0, h1, h2, h3, d, x0 + 7 * xrb + xo, xd + 7 * xrb + so, xs + 7 * xrb + so);
      }
    } else {
      const pb = wg + <usize>b * 136;
      const d = scales4(pb);
      const c0 = v128.load(pb, 8), c1 = v128.load(pb, 24), c2 = v128.load(pb, 40), c3 = v128.load(pb, 56);
      const c4 = v128.load(pb, 72), c5 = v128.load(pb, 88), c6 = v128.load(pb, 104), c7 = v128.load(pb, 120);
      const po = sp + (<usize>b << 6);
      a0 = q8Token(a0, c0, c1, c2, c3, c4, c5, c6, c7, d, po, xd + so);
      if (nTok >= 4) {
        a1 = q8Token(a1, c0, c1, c2, c3, c4, c5, c6, c7, d, po + srb, xd + xrb + so);
        a2 = q8Token(a2, c0, c1, c2, c3, c4, c5, c6, c7, d, po + 2 * srb, xd + 2 * xrb + so);
        a3 = q8Token(a3, c0, c1, c2, c3, c4, c5, c6, c7, d, po + 3 * srb, xd + 3 * xrb + so);
      }
      if (nTok == 8) {
        a4 = q8Token(a4, c0, c1, c2, c3, c4, c5, c6, c7, d, po + 4 * srb, xd + 4 * xrb + so);
        a5 = q8Token(a5, c0, c1, c2, c3, c4, c5, c6, c7, d, po + 5 * srb, xd + 5 * xrb + so);
        a6 = q8Token(a6, c0, c1, c2, c3, c4, c5, c6, c7, d, po + 6 * srb, xd + 6 * xrb + so);
        a7 = q8Token(a7, c0, c1, c2, c3, c4, c5, c6, c7, d, po + 7 * srb, xd + 7 * xrb + so);
      }
    }
  }
  storeRows(o, a0, masked, lo, hi);
  if (nTok >= 4) {
    storeRows(o + osb, a1, masked, lo, hi);
    storeRows(o + 2 * osb, a2, masked, lo, hi);
    storeRows(o + 3 * osb, a3, masked, lo, hi);
  }
  if (nTok == 8) {
    storeRows(o + 4 * osb, a4, masked, lo, hi);
    storeRows(o + 5 * osb, a5, masked, lo, hi);
    storeRows(o + 6 * osb, a6, masked, lo, hi);
    storeRows(o + 7 * osb, a7, masked, lo, hi);
  }
}

/**
 * W (4-row groups) · n Q8 activation rows at x → out f32 [n, outStride], rows r0 … r1−1 (any bounds: a group cut by
 * r0 or r1 is computed whole and only its rows inside are stored, so threads' chunks need not be group-aligned).
 * Q8_0 (kind 1) reads its split rows at x + n·q8RowBytes(k) (split_q8_signs). Tokens go 8 at a time (Q4_0), then 4,
 * then one by one.
 */
// @ts-ignore: decorator
@inline function gemvStoredRows4(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32, kind: i32): void {
  if (!ASC_FEATURE_RELAXED_SIMD) {
    unreachable();
    return;
  }
  const nb = k >> 5;
  const gb = <usize>nb * (kind == 0 ? 72 : 136); // bytes of one group
  const xrb = q8RowBytes(k);
  const sp = x + <usize>n * xrb; // Q8_0: split rows [n, 2k]
  const srb = <usize>k << 1;
  const osb = <usize>outStride << 2;
  for (let g = r0 >> 2; g < (r1 + 3) >> 2; g++) {
    const lo = max(r0 - (g << 2), 0);
    const hi = min(r1 - (g << 2), 4);
    const wg = w + <usize>g * gb;
    const og = out + (<usize>(g << 2) << 2);
    const xg = x, sg = sp;
    if (lo != 0 || hi != 4) {
      // A group cut by r0 or r1 (thread chunks need not be group-aligned): token by token, only its rows inside.
      for (let t = 0; t < n; t++) {
        if (kind == 0) tileQ4Masked(wg, xg + <usize>t * xrb, xrb, sg + <usize>t * srb, nb, k, og + <usize>t * osb, osb, lo, hi);
        else tileQ8Masked(wg, xg + <usize>t * xrb, xrb, sg + <usize>t * srb, nb, k, og + <usize>t * osb, osb, lo, hi);
      }
      continue;
    }
    let t = 0;
    if (kind == 0) {
      for (; t + 8 <= n; t += 8) tile(wg, x + <usize>t * xrb, xrb, sp + <usize>t * srb, nb, k, og + <usize>t * osb, osb, 8, kind, false, 0, 4);
    }
    for (; t + 4 <= n; t += 4) tile(wg, x + <usize>t * xrb, xrb, sp + <usize>t * srb, nb, k, og + <usize>t * osb, osb, 4, kind, false, 0, 4);
    for (; t < n; t++) tile(wg, x + <usize>t * xrb, xrb, sp + <usize>t * srb, nb, k, og + <usize>t * osb, osb, 1, kind, false, 0, 4);
  }
}

/** One token of a cut group, Q4_0 (see storeRows: kept out of the full tiles' function). */
function tileQ4Masked(wg: usize, x0: usize, xrb: usize, sp: usize, nb: i32, k: i32, o: usize, osb: usize, lo: i32, hi: i32): void {
  tile(wg, x0, xrb, sp, nb, k, o, osb, 1, 0, true, lo, hi);
}

/** One token of a cut group, Q8_0. */
function tileQ8Masked(wg: usize, x0: usize, xrb: usize, sp: usize, nb: i32, k: i32, o: usize, osb: usize, lo: i32, hi: i32): void {
  tile(wg, x0, xrb, sp, nb, k, o, osb, 1, 1, true, lo, hi);
}

/** 1 in the relaxed-SIMD builds, whose 4-row kernels run; 0 where they trap (the host then keeps row pairs). */
export function rows4_kernels(): i32 {
  return ASC_FEATURE_RELAXED_SIMD ? 1 : 0;
}

/** Q4_0 weights in 4-row groups · n Q8 rows (see gemvStoredRows4). */
export function gemv_q4_0_r4(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  gemvStoredRows4(w, x, out, k, r0, r1, n, outStride, 0);
}

/** Q8_0 weights in 4-row groups · n Q8 rows, their split_q8_signs rows right after them (see gemvStoredRows4). */
export function gemv_q8_0_r4(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  gemvStoredRows4(w, x, out, k, r0, r1, n, outStride, 1);
}

/**
 * Writes, for n Q8 activation rows at x (k elements each), their quants split by sign to out [n, 2k] bytes: per block
 * of 32, x⁺ = max(q, 0) then x⁻ = max(−q, 0) (32 bytes each), the i7 operands of gemv_q8_0_r4.
 */
export function split_q8_signs(x: usize, n: i32, k: i32, out: usize): void {
  const xrb = q8RowBytes(k);
  const nb = k >> 5;
  for (let t = 0; t < n; t++) {
    const qs = x + <usize>t * xrb;
    const o = out + (<usize>t * <usize>k << 1);
    for (let b = 0; b < nb; b++) {
      const q = qs + (<usize>b << 5);
      const p = o + (<usize>b << 6);
      if (ASC_FEATURE_SIMD) {
        const zero = i8x16.splat(0);
        const q0 = v128.load(q), q1 = v128.load(q, 16);
        v128.store(p, i8x16.max_s(q0, zero));
        v128.store(p, i8x16.max_s(q1, zero), 16);
        v128.store(p, i8x16.max_s(i8x16.neg(q0), zero), 32);
        v128.store(p, i8x16.max_s(i8x16.neg(q1), zero), 48);
      } else {
        for (let i: usize = 0; i < 32; i++) {
          const v = <i32>load<i8>(q + i);
          store<u8>(p + i, <u8>max(v, 0));
          store<u8>(p + 32 + i, <u8>max(-v, 0));
        }
      }
    }
  }
}
