/**
 * Shared numeric helpers of the kernels: f16/bf16 → f32 and the 16-lane integer dot products the quantized matvecs
 * are built from. One source, three builds: `ASC_FEATURE_SIMD` / `ASC_FEATURE_RELAXED_SIMD` are compile-time
 * constants, so each build keeps only its own branch.
 */

/**
 * True in the `relaxed-dot` build (asc `--use DOT_ADD=1`, scripts/build-wasm.mjs): the integer tiles accumulate with
 * `i32x4.relaxed_dot_i8x16_i7x16_add_s`, which engines with a dot-product instruction (x86 AVX-VNNI `vpdpbusd`, Arm
 * `sdot`) run as one instruction — 16 products and the i32 accumulation — instead of the i16 dot, the i16 adds and
 * a widening. The host loads that build only where a probe shows such a lowering (src/backend/wasm/dot-add-probe.ts):
 * Node 20's V8 emits three instructions for it and returns wrong sums. Operands stay in the i7 range (unsigned quants
 * ≤ 127 as the second operand), where every lowering agrees, so both builds compute the same integers.
 */
// @ts-ignore: DOT_ADD is a global constant defined by the build command (asc --use)
export const USE_DOT_ADD: bool = DOT_ADD != 0;

/** 2^112: rescales an f16 exponent/mantissa shifted into f32 position (exact for normals and subnormals). */
const F16_EXP_REBIAS: f32 = 5.192296858534828e33;

/** IEEE half → float for finite values (weights never hold inf/NaN). */
// @ts-ignore: decorator
@inline export function f16ToF32(h: u32): f32 {
  const mag = reinterpret<f32>((h & 0x7fff) << 13) * F16_EXP_REBIAS;
  return reinterpret<f32>(reinterpret<u32>(mag) | ((h & 0x8000) << 16));
}

/** Loads the f16 at `p` as f32. */
// @ts-ignore: decorator
@inline export function loadF16(p: usize): f32 {
  return f16ToF32(<u32>load<u16>(p));
}

/** Four f16 (the low 64 bits of `h`, already widened to u32 lanes) → f32x4. */
// @ts-ignore: decorator
@inline export function f16x4ToF32x4(h32: v128): v128 {
  const mag = f32x4.mul(i32x4.shl(v128.and(h32, i32x4.splat(0x7fff)), 13), f32x4.splat(F16_EXP_REBIAS));
  return v128.or(mag, i32x4.shl(v128.and(h32, i32x4.splat(0x8000)), 16));
}

/**
 * i32x4 partial sums of w·x over 16 lanes, w unsigned 0…127 (weights' unsigned quants), x signed i8 (activations).
 * Relaxed: `i16x8.relaxed_dot_i8x16_i7x16_s` (deterministic for w < 128) — NOT the `_add_s` form, wrong on Node 20.
 */
// @ts-ignore: decorator
@inline export function dotU7I8(w: v128, x: v128): v128 {
  if (USE_DOT_ADD) {
    return i32x4.relaxed_dot_i8x16_i7x16_add_s(x, w, i32x4.splat(0));
  } else if (ASC_FEATURE_RELAXED_SIMD) {
    return i32x4.extadd_pairwise_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(x, w));
  } else {
    const lo = i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_u(w), i16x8.extend_low_i8x16_s(x));
    const hi = i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_u(w), i16x8.extend_high_i8x16_s(x));
    return i32x4.add(lo, hi);
  }
}

/**
 * i32x4 partial sums of w0·x0 + w1·x1 (32 lanes), w unsigned ≤ 63. In the relaxed build the two i16 products add
 * before widening: each i16 lane holds ≤ 2·2·63·127 = 32004 < 32767, so this is exact.
 */
// @ts-ignore: decorator
@inline export function dot2U7I8(w0: v128, x0: v128, w1: v128, x1: v128): v128 {
  if (USE_DOT_ADD) {
    return i32x4.relaxed_dot_i8x16_i7x16_add_s(x1, w1, i32x4.relaxed_dot_i8x16_i7x16_add_s(x0, w0, i32x4.splat(0)));
  } else if (ASC_FEATURE_RELAXED_SIMD) {
    return i32x4.extadd_pairwise_i16x8_s(
      i16x8.add(i16x8.relaxed_dot_i8x16_i7x16_s(x0, w0), i16x8.relaxed_dot_i8x16_i7x16_s(x1, w1)),
    );
  } else {
    return i32x4.add(dotU7I8(w0, x0), dotU7I8(w1, x1));
  }
}

/**
 * The high nibble of every byte (0…15). `i8x16.shr_u` has no x86 instruction (V8 emits a 16-bit shift plus a mask
 * it rebuilds in a general register each time); a 16-bit shift and the caller's hoisted 0x0f mask give the same bytes.
 */
// @ts-ignore: decorator
@inline export function hiNibbles(v: v128, mask0f: v128): v128 {
  return v128.and(i16x8.shr_u(v, 4), mask0f);
}

/**
 * i16x8 lanes whose sum is w0·x0 + w1·x1 (32 lanes), w unsigned ≤ 15 (4-bit quants), |x| ≤ 127 (Q8 activations):
 * each lane holds at most 4·15·127 = 7620, so up to four such vectors add in i16 without overflow (see hsum4I16).
 */
// @ts-ignore: decorator
@inline export function dot2U4I8I16(w0: v128, x0: v128, w1: v128, x1: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) {
    return i16x8.add(i16x8.relaxed_dot_i8x16_i7x16_s(x0, w0), i16x8.relaxed_dot_i8x16_i7x16_s(x1, w1));
  } else {
    // w ≤ 15 reads the same as signed i8, so the signed widening multiply serves.
    return i16x8.add(
      i16x8.add(i16x8.extmul_low_i8x16_s(w0, x0), i16x8.extmul_high_i8x16_s(w0, x0)),
      i16x8.add(i16x8.extmul_low_i8x16_s(w1, x1), i16x8.extmul_high_i8x16_s(w1, x1)),
    );
  }
}

/**
 * Q5 high bits: lane j of the result is 0x10 when bit (j + 16·half) of `qh` is set (byte j >> 3 of the half spread
 * over eight lanes, each lane's bit selected, then compared with its mask: set lanes read all ones).
 */
// @ts-ignore: decorator
@inline export function q5HighBits(qh: u32, half: i32): v128 {
  const bytes = i32x4.splat(qh);
  const idx = half == 0 ? i8x16(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1) : i8x16(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
  const bit = i8x16(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
  return v128.and(i8x16.eq(v128.and(i8x16.swizzle(bytes, idx), bit), bit), i8x16.splat(0x10));
}

/**
 * Σ of four `i16x8.relaxed_dot_i8x16_i7x16_s` in i16: x's 4-byte chunk c (splatted to every lane by a shuffle, one
 * vpshufd: eight load32_splats per block made V8 keep and spill an address register per offset) against w_c (0…127
 * bytes; the 4-row tiles' chunk of four quants × four rows). The caller bounds the sum within i16.
 */
// @ts-ignore: decorator
@inline export function dot4ChunksI16(x: v128, w0: v128, w1: v128, w2: v128, w3: v128): v128 {
  let s = i16x8.relaxed_dot_i8x16_i7x16_s(v128.shuffle<i32>(x, x, 0, 0, 0, 0), w0);
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.shuffle<i32>(x, x, 1, 1, 1, 1), w1));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.shuffle<i32>(x, x, 2, 2, 2, 2), w2));
  return i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.shuffle<i32>(x, x, 3, 3, 3, 3), w3));
}

/**
 * [Σ lanes of a, Σ b, Σ c, Σ d] as i32x4 for four i16x8 vectors whose lanes are ≤ 7620 in magnitude (dot2U4I8I16):
 * two rounds of 32- and 64-bit interleaves (single x86 unpack instructions) add lanes in i16 (≤ 4·7620 = 30480), then
 * one pairwise widening add.
 */
// @ts-ignore: decorator
@inline export function hsum4I16(a: v128, b: v128, c: v128, d: v128): v128 {
  const ab = i16x8.add(i32x4.shuffle(a, b, 0, 4, 1, 5), i32x4.shuffle(a, b, 2, 6, 3, 7)); // a a b b a a b b
  const cd = i16x8.add(i32x4.shuffle(c, d, 0, 4, 1, 5), i32x4.shuffle(c, d, 2, 6, 3, 7));
  return i32x4.extadd_pairwise_i16x8_s(i16x8.add(i64x2.shuffle(ab, cd, 0, 2), i64x2.shuffle(ab, cd, 1, 3)));
}

/** [Σ lanes of a, Σ b, Σ c, Σ d] for four i32x4 vectors (a 4×4 transpose-add in unpack instructions). */
// @ts-ignore: decorator
@inline export function hsum4I32(a: v128, b: v128, c: v128, d: v128): v128 {
  const ab = i32x4.add(i32x4.shuffle(a, b, 0, 4, 1, 5), i32x4.shuffle(a, b, 2, 6, 3, 7)); // [a0+a2, b0+b2, a1+a3, b1+b3]
  const cd = i32x4.add(i32x4.shuffle(c, d, 0, 4, 1, 5), i32x4.shuffle(c, d, 2, 6, 3, 7));
  return i32x4.add(i64x2.shuffle(ab, cd, 0, 2), i64x2.shuffle(ab, cd, 1, 3));
}

/** [Σ lanes of a, Σ b, Σ c, Σ d] for four f32x4 vectors (the same transpose-add as hsum4I32). */
// @ts-ignore: decorator
@inline export function hsum4F32(a: v128, b: v128, c: v128, d: v128): v128 {
  const ab = f32x4.add(i32x4.shuffle(a, b, 0, 4, 1, 5), i32x4.shuffle(a, b, 2, 6, 3, 7));
  const cd = f32x4.add(i32x4.shuffle(c, d, 0, 4, 1, 5), i32x4.shuffle(c, d, 2, 6, 3, 7));
  return f32x4.add(i64x2.shuffle(ab, cd, 0, 2), i64x2.shuffle(ab, cd, 1, 3));
}

/** i32x4 partial sums of w·x over 16 lanes, both signed i8 (Q8_0 weights). */
// @ts-ignore: decorator
@inline export function dotI8I8(w: v128, x: v128): v128 {
  const lo = i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_s(w), i16x8.extend_low_i8x16_s(x));
  const hi = i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_s(w), i16x8.extend_high_i8x16_s(x));
  return i32x4.add(lo, hi);
}

/** acc + a·b on f32x4 (fused where the build allows). */
// @ts-ignore: decorator
@inline export function fmaF32x4(acc: v128, a: v128, b: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) {
    return f32x4.relaxed_madd(a, b, acc);
  } else {
    return f32x4.add(acc, f32x4.mul(a, b));
  }
}

/** Sum of the four f32 lanes. */
// @ts-ignore: decorator
@inline export function hsumF32x4(v: v128): f32 {
  return f32x4.extract_lane(v, 0) + f32x4.extract_lane(v, 1) + (f32x4.extract_lane(v, 2) + f32x4.extract_lane(v, 3));
}

/** Sum of the four i32 lanes. */
// @ts-ignore: decorator
@inline export function hsumI32x4(v: v128): i32 {
  return i32x4.extract_lane(v, 0) + i32x4.extract_lane(v, 1) + i32x4.extract_lane(v, 2) + i32x4.extract_lane(v, 3);
}
