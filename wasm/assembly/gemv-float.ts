/**
 * Matvecs for float weights — F32, F16, BF16 — against f32 activations (no activation rounding: more exact than
 * llama.cpp, which converts x to f16/bf16). Any row length k (tails handled lane by lane).
 * out[t, r] = dot(W[r], x[t]) for rows r0 ≤ r < r1, tokens t < n; x is f32 [n, k], out f32 [n, outStride].
 */
import { f16ToF32, f16x4ToF32x4, fmaF32x4, hsumF32x4 } from './simd-dot';

/** 0 = f32, 1 = f16, 2 = bf16 weights. */
// @ts-ignore: decorator
@inline function rowDotFloat(wr: usize, xr: usize, k: i32, kind: i32): f32 {
  let i = 0;
  let sum: f32 = 0;
  if (ASC_FEATURE_SIMD) {
    let a0 = f32x4.splat(0);
    let a1 = f32x4.splat(0);
    for (; i + 8 <= k; i += 8) {
      const xp = xr + (<usize>i << 2);
      let w0: v128, w1: v128;
      if (kind == 0) {
        w0 = v128.load(wr + (<usize>i << 2));
        w1 = v128.load(wr + (<usize>i << 2), 16);
      } else {
        const h = v128.load(wr + (<usize>i << 1));
        const lo = i32x4.extend_low_i16x8_u(h);
        const hi = i32x4.extend_high_i16x8_u(h);
        if (kind == 1) {
          w0 = f16x4ToF32x4(lo);
          w1 = f16x4ToF32x4(hi);
        } else {
          w0 = i32x4.shl(lo, 16);
          w1 = i32x4.shl(hi, 16);
        }
      }
      a0 = fmaF32x4(a0, w0, v128.load(xp));
      a1 = fmaF32x4(a1, w1, v128.load(xp, 16));
    }
    sum = hsumF32x4(f32x4.add(a0, a1));
  }
  for (; i < k; i++) {
    let wv: f32;
    if (kind == 0) wv = load<f32>(wr + (<usize>i << 2));
    else if (kind == 1) wv = f16ToF32(<u32>load<u16>(wr + (<usize>i << 1)));
    else wv = reinterpret<f32>(<u32>load<u16>(wr + (<usize>i << 1)) << 16);
    sum += wv * load<f32>(xr + (<usize>i << 2));
  }
  return sum;
}

// @ts-ignore: decorator
@inline function gemvFloat(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32, kind: i32): void {
  const rowBytes = <usize>k << (kind == 0 ? 2 : 1);
  for (let r = r0; r < r1; r++) {
    const wr = w + <usize>r * rowBytes;
    for (let t = 0; t < n; t++) {
      const v = rowDotFloat(wr, x + ((<usize>t * <usize>k) << 2), k, kind);
      store<f32>(out + ((<usize>t * <usize>outStride + <usize>r) << 2), v);
    }
  }
}

/** F32 weights [nRows, k] · f32 activations [n, k] → out [n, outStride]. */
export function gemv_f32(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  gemvFloat(w, x, out, k, r0, r1, n, outStride, 0);
}

/** F16 weights · f32 activations (see gemv_f32). */
export function gemv_f16(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  gemvFloat(w, x, out, k, r0, r1, n, outStride, 1);
}

/** BF16 weights · f32 activations (see gemv_f32). */
export function gemv_bf16(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  gemvFloat(w, x, out, k, r0, r1, n, outStride, 2);
}
