/**
 * Shared numeric helpers of the kernels: f16/bf16 → f32 and the 16-lane integer dot products the quantized matvecs
 * are built from. One source, three builds: `ASC_FEATURE_SIMD` / `ASC_FEATURE_RELAXED_SIMD` are compile-time
 * constants, so each build keeps only its own branch.
 */

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
  if (ASC_FEATURE_RELAXED_SIMD) {
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
  if (ASC_FEATURE_RELAXED_SIMD) {
    return i32x4.extadd_pairwise_i16x8_s(
      i16x8.add(i16x8.relaxed_dot_i8x16_i7x16_s(x0, w0), i16x8.relaxed_dot_i8x16_i7x16_s(x1, w1)),
    );
  } else {
    return i32x4.add(dotU7I8(w0, x0), dotU7I8(w1, x1));
  }
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
