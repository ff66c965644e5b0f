/**
 * e^x lane-wise for softmax numerators (x = score − row maximum ≤ 0), the Cephes polynomial of fast-math.ts's expf4
 * (|relative error| < 2e-7 over the softmax range) without the wasm operations that cost many x86 instructions
 * each: the clamp is one pseudo-max (no NaN/±0 fix-ups of f32x4.max/min; a NaN lane stays NaN), the rounding to
 * n = round(x·log2 e) adds 1.5·2^23 (the integer lands in the low mantissa bits, so no f32x4.nearest and no
 * saturating float → int conversion: 2^n is those bits + 127 shifted into the exponent), and the polynomial is
 * Horner multiply-adds (fused on relaxed-SIMD builds). Lanes below −87.3 give e^−87.3 ≈ 1e-38 instead of 0 (a
 * softmax weight no sum can see).
 */
import { fmaF32x4 } from './simd-dot';

const LOG2E: f32 = 1.44269504088896341;
const LN2_HI: f32 = 0.693359375;
const LN2_LO: f32 = -2.12194440e-4;
/** 1.5·2^23: x + ROUNDER rounds x (|x| < 2^22) to an integer held in the low mantissa bits. */
const ROUNDER: f32 = 12582912;

/** e^x for lanes x ≤ 0 (see the file header). */
// @ts-ignore: decorator
@inline export function expNeg4(x0: v128): v128 {
  const x = f32x4.pmax(x0, f32x4.splat(-87.3));
  const t = fmaF32x4(f32x4.splat(ROUNDER), x, f32x4.splat(LOG2E));
  const n = f32x4.sub(t, f32x4.splat(ROUNDER));
  const r = fmaF32x4(fmaF32x4(x, n, f32x4.splat(-LN2_HI)), n, f32x4.splat(-LN2_LO));
  const z = f32x4.mul(r, r);
  let p = f32x4.splat(1.9875691500e-4);
  p = fmaF32x4(f32x4.splat(1.3981999507e-3), p, r);
  p = fmaF32x4(f32x4.splat(8.3334519073e-3), p, r);
  p = fmaF32x4(f32x4.splat(4.1665795894e-2), p, r);
  p = fmaF32x4(f32x4.splat(1.6666665459e-1), p, r);
  p = fmaF32x4(f32x4.splat(5.0000001201e-1), p, r);
  const y = f32x4.add(fmaF32x4(r, p, z), f32x4.splat(1));
  // t's bits are ROUNDER's + n, and ROUNDER's low 9 bits are 0: (bits + 127) << 23 is (n + 127) << 23 = 2^n.
  return f32x4.mul(y, i32x4.shl(i32x4.add(t, i32x4.splat(127)), 23));
}
