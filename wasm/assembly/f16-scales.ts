/**
 * f16 → f32 for the K-quants' super-block scales (Q4_K/Q5_K d and dmin, Q6_K d), which are often subnormal halves:
 * a Q6_K d is max|w| / (32·127) and a Q4_K d the largest 6-bit sub-block scale / 63, so a tensor of small weights
 * (|w| < 0.008 for Q6_K) holds many below 2^−14. simd-dot.ts's f16ToF32 / f16x4ToF32x4 shift a half into f32
 * position and multiply by 2^112 — exact, but a subnormal half becomes a subnormal f32 operand, which costs a
 * microcode assist per multiply on x86: the K-quant matvecs ran at half speed on such tensors (an LFM2-shaped
 * ffn_down 7.8 vs 14.9 GB/CPU-s). Here normals get an integer rebias of the exponent and a subnormal (or zero)
 * is (1 + m/1024)·2^−14 − 2^−14 = m·2^−24, exact with normal operands only: the same values for every finite half.
 * A few more instructions than the multiply, so the per-block scales of Q4_0/Q5_0/Q8_0 (converted every 32
 * weights, and subnormal only for |w| < 5·10^−4) keep the multiply.
 */

/** f32 bits to add to a half's exponent/mantissa shifted into f32 position: the exponent rebias 127 − 15. */
const REBIAS_BITS: i32 = 112 << 23;
/** 2^−14, the smallest normal half. */
const MIN_NORMAL: f32 = 6.103515625e-5;
/** Its f32 bits: 113 << 23, the rebias plus one. */
const MIN_NORMAL_BITS: i32 = REBIAS_BITS + (1 << 23);

/** IEEE half (finite) → f32 with no subnormal operand (see the file header). */
// @ts-ignore: decorator
@inline export function scaleF16ToF32(h: u32): f32 {
  const bits = (h & 0x7fff) << 13;
  const sub = reinterpret<f32>(bits + (REBIAS_BITS + (1 << 23))) - MIN_NORMAL;
  const mag = select<f32>(reinterpret<f32>(bits + REBIAS_BITS), sub, (h & 0x7c00) != 0);
  return reinterpret<f32>(reinterpret<u32>(mag) | ((h & 0x8000) << 16));
}

/** Loads the f16 scale at `p` as f32 (scaleF16ToF32). */
// @ts-ignore: decorator
@inline export function loadScaleF16(p: usize): f32 {
  return scaleF16ToF32(<u32>load<u16>(p));
}

/**
 * Four halves (u32 lanes) → f32x4 as scaleF16ToF32, without a select: n = the rebiased bits (right for normals; for a
 * subnormal (1 + m/1024)·2^−15) and s = the bits rebiased one more, less 2^−14 (m·2^−24 for a subnormal), and the
 * smaller is the right one — s ≥ n exactly when n ≥ 2^−14, i.e. for normals, and for subnormals s < n as m < 1024.
 * `pmin` is one minps. Two constants only (2^−14's bits are the second rebias), shifts standing in for the masks: V8
 * materialises every v128 constant of a kernel once at its entry and keeps it live through the loops, so each one
 * costs a register or a stack slot there (five constants cost the K-quant kernels 2–4 % on normal scales).
 */
// @ts-ignore: decorator
@inline export function scaleF16x4ToF32x4(h32: v128): v128 {
  const bits = i32x4.shr_u(i32x4.shl(h32, 17), 4); // exponent and mantissa in f32 position, sign dropped
  const n = i32x4.add(bits, i32x4.splat(REBIAS_BITS));
  const minNormal = i32x4.splat(MIN_NORMAL_BITS); // (127 − 14) << 23: 2^−14 as f32, and the rebias + 1 as bits
  const s = f32x4.sub(i32x4.add(bits, minNormal), minNormal);
  return v128.or(f32x4.pmin(n, s), i32x4.shl(i32x4.shr_u(h32, 15), 31));
}

/** The four rows' f16 super-block scales at `pb` (a 4-row group's d or dmin) → f32x4. */
// @ts-ignore: decorator
@inline export function kScales4(pb: usize): v128 {
  return scaleF16x4ToF32x4(i32x4.extend_low_i16x8_u(v128.load64_zero(pb)));
}
