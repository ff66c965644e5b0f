/**
 * Table-free f32 exp and tanh for the attention kernel. AssemblyScript's Mathf.exp uses a lookup table stored as a
 * data segment; the kernels must have none (the host owns all of memory, and with a shared memory every thread's
 * instantiation would rewrite it). Cephes-style expf: |relative error| < 2e-7 on the softmax range. The f32x4
 * twin serves the GLU kernel (same polynomial, inputs clamped to the finite range).
 */

const LOG2E: f32 = 1.44269504088896341;
const LN2_HI: f32 = 0.693359375;
const LN2_LO: f32 = -2.12194440e-4;

/** e^x; 0 below −87.3 (f32 underflow), +inf above 88.7. */
export function expf(x: f32): f32 {
  if (x < -87.3) return 0;
  if (x > 88.7) return Infinity;
  const n = nearest(x * LOG2E);
  const r = x - n * LN2_HI - n * LN2_LO;
  const z = r * r;
  let p: f32 = 1.9875691500e-4;
  p = p * r + 1.3981999507e-3;
  p = p * r + 8.3334519073e-3;
  p = p * r + 4.1665795894e-2;
  p = p * r + 1.6666665459e-1;
  p = p * r + 5.0000001201e-1;
  const y = p * z + r + 1;
  return y * reinterpret<f32>((<i32>n + 127) << 23);
}

/** tanh(x) = sign(x)·(1 − 2 / (e^{2|x|} + 1)); ±1 beyond |x| = 9 (within f32 rounding). */
export function tanhf(x: f32): f32 {
  const a = abs(x);
  if (a > 9) return x > 0 ? 1 : -1;
  const t: f32 = 1 - 2 / (expf(2 * a) + 1);
  return x < 0 ? -t : t;
}

/**
 * e^x lane-wise for x clamped to [−87.3, 88.7] (no zero/inf lanes: callers only divide by 1 + e^x). The clamp is two
 * pseudo-min/max (one minps/maxps each; f32x4.min/max add NaN and ±0 fix-ups, several x86 instructions each) and
 * the exponent's conversion the relaxed truncation where the build has it (n is an integer in [−126, 128]): the same
 * values for every lane, a NaN lane staying NaN.
 */
// @ts-ignore: decorator
@inline export function expf4(x0: v128): v128 {
  const x = f32x4.pmin(f32x4.pmax(x0, f32x4.splat(-87.3)), f32x4.splat(88.7));
  const n = f32x4.nearest(f32x4.mul(x, f32x4.splat(LOG2E)));
  const r = f32x4.sub(f32x4.sub(x, f32x4.mul(n, f32x4.splat(LN2_HI))), f32x4.mul(n, f32x4.splat(LN2_LO)));
  const z = f32x4.mul(r, r);
  let p = f32x4.splat(1.9875691500e-4);
  p = f32x4.add(f32x4.mul(p, r), f32x4.splat(1.3981999507e-3));
  p = f32x4.add(f32x4.mul(p, r), f32x4.splat(8.3334519073e-3));
  p = f32x4.add(f32x4.mul(p, r), f32x4.splat(4.1665795894e-2));
  p = f32x4.add(f32x4.mul(p, r), f32x4.splat(1.6666665459e-1));
  p = f32x4.add(f32x4.mul(p, r), f32x4.splat(5.0000001201e-1));
  const y = f32x4.add(f32x4.add(f32x4.mul(p, z), r), f32x4.splat(1));
  const ni = ASC_FEATURE_RELAXED_SIMD ? i32x4.relaxed_trunc_f32x4_s(n) : i32x4.trunc_sat_f32x4_s(n);
  return f32x4.mul(y, i32x4.shl(i32x4.add(ni, i32x4.splat(127)), 23));
}
