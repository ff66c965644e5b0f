/**
 * Multi-token products of float weights (the vision encoder's patch GEMM and blocks, any F32/F16 prefill): the weight
 * rows are f32 (F16 rows converted once per call by `f16_rows_to_f32`, not once per token as `gemv_f16` does), and
 * `gemm_f32` computes tiles of 2 rows × 3 tokens, each weight vector loaded once for three tokens and each activation
 * vector once for two rows. Every dot is accumulated exactly as gemv-float.ts's `rowDotFloat` does (two f32x4
 * accumulators over steps of 8, their sum reduced, then the tail lane by lane), so the results are bit-identical to
 * `gemv_f32` / `gemv_f16` on the same weights: only the order of the loops differs.
 * Signatures are the GEMV one (w, x, out, k, r0, r1, n, outStride) so the thread pool splits them by rows.
 */
import { f16ToF32, f16x4ToF32x4, fmaF32x4, hsumF32x4 } from './simd-dot';

/**
 * Rows r0 … r1−1 of F16 weights at `w` ([nRows, k]) as f32 at `out`, row r at out + r·k·4 (values exact; the same
 * conversion as gemv_f16). `x`, `n`, `outStride` are unused.
 */
export function f16_rows_to_f32(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  let i = <usize>r0 * <usize>k;
  const end = <usize>r1 * <usize>k;
  if (ASC_FEATURE_SIMD) {
    for (; i + 8 <= end; i += 8) {
      const h = v128.load(w + (i << 1));
      v128.store(out + (i << 2), f16x4ToF32x4(i32x4.extend_low_i16x8_u(h)));
      v128.store(out + (i << 2), f16x4ToF32x4(i32x4.extend_high_i16x8_u(h)), 16);
    }
  }
  for (; i < end; i++) store<f32>(out + (i << 2), f16ToF32(<u32>load<u16>(w + (i << 1))));
}

/** The reduction of one dot: hsum(lo + hi), then the tail from `i`, lane by lane (as rowDotFloat). */
// @ts-ignore: decorator
@inline function finish(lo: v128, hi: v128, wr: usize, xr: usize, i: i32, k: i32): f32 {
  let sum: f32 = hsumF32x4(f32x4.add(lo, hi));
  for (; i < k; i++) sum += load<f32>(wr + (<usize>i << 2)) * load<f32>(xr + (<usize>i << 2));
  return sum;
}

/** One dot of an f32 row with an f32 activation row (rowDotFloat's order). */
// @ts-ignore: decorator
@inline function dot1(wr: usize, xr: usize, k: i32): f32 {
  let i = 0;
  let sum: f32 = 0;
  if (ASC_FEATURE_SIMD) {
    let a0 = f32x4.splat(0);
    let a1 = f32x4.splat(0);
    for (; i + 8 <= k; i += 8) {
      const o = <usize>i << 2;
      a0 = fmaF32x4(a0, v128.load(wr + o), v128.load(xr + o));
      a1 = fmaF32x4(a1, v128.load(wr + o, 16), v128.load(xr + o, 16));
    }
    sum = hsumF32x4(f32x4.add(a0, a1));
  }
  for (; i < k; i++) sum += load<f32>(wr + (<usize>i << 2)) * load<f32>(xr + (<usize>i << 2));
  return sum;
}

/**
 * Rows r0 … r1−1 of f32 weights [nRows, k] · f32 activations [n, k] → out [n, outStride], in 2 × 3 tiles. Tokens go
 * in blocks of ~512 KB of activations (kept in cache while every row pair of the call passes over them); each row
 * pair stays in L1 across its block.
 */
export function gemm_f32(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  const rowBytes = <usize>k << 2;
  const stride = <usize>outStride << 2;
  const block = max(3, (131072 / k / 3) * 3);
  for (let t0 = 0; t0 < n; t0 += block) {
    const t1 = min(n, t0 + block);
    let r = r0;
    if (ASC_FEATURE_SIMD) {
      for (; r + 2 <= r1; r += 2) tilePair(w + <usize>r * rowBytes, x, out + (<usize>r << 2), k, t0, t1, stride);
    }
    for (; r < r1; r++) {
      const wr = w + <usize>r * rowBytes;
      for (let t = t0; t < t1; t++) {
        store<f32>(out + <usize>t * stride + (<usize>r << 2), dot1(wr, x + <usize>t * rowBytes, k));
      }
    }
  }
}

/** Rows w0 and w0 + k (f32) times tokens t0 … t1−1 of x → out (at the pair's first column) + t·stride. */
// @ts-ignore: decorator
@inline function tilePair(w0: usize, x: usize, out: usize, k: i32, t0: i32, t1: i32, stride: usize): void {
  const rowBytes = <usize>k << 2;
  const w1 = w0 + rowBytes;
  let t = t0;
  for (; t + 3 <= t1; t += 3) {
    const x0 = x + <usize>t * rowBytes;
    const x1 = x0 + rowBytes;
    const x2 = x1 + rowBytes;
    let l00 = f32x4.splat(0), h00 = f32x4.splat(0), l01 = f32x4.splat(0), h01 = f32x4.splat(0);
    let l02 = f32x4.splat(0), h02 = f32x4.splat(0), l10 = f32x4.splat(0), h10 = f32x4.splat(0);
    let l11 = f32x4.splat(0), h11 = f32x4.splat(0), l12 = f32x4.splat(0), h12 = f32x4.splat(0);
    let i = 0;
    for (; i + 8 <= k; i += 8) {
      const o = <usize>i << 2;
      let a = v128.load(w0 + o);
      let b = v128.load(w1 + o);
      let v = v128.load(x0 + o);
      l00 = fmaF32x4(l00, a, v);
      l10 = fmaF32x4(l10, b, v);
      v = v128.load(x1 + o);
      l01 = fmaF32x4(l01, a, v);
      l11 = fmaF32x4(l11, b, v);
      v = v128.load(x2 + o);
      l02 = fmaF32x4(l02, a, v);
      l12 = fmaF32x4(l12, b, v);
      a = v128.load(w0 + o, 16);
      b = v128.load(w1 + o, 16);
      v = v128.load(x0 + o, 16);
      h00 = fmaF32x4(h00, a, v);
      h10 = fmaF32x4(h10, b, v);
      v = v128.load(x1 + o, 16);
      h01 = fmaF32x4(h01, a, v);
      h11 = fmaF32x4(h11, b, v);
      v = v128.load(x2 + o, 16);
      h02 = fmaF32x4(h02, a, v);
      h12 = fmaF32x4(h12, b, v);
    }
    const o0 = out + <usize>t * stride;
    store<f32>(o0, finish(l00, h00, w0, x0, i, k));
    store<f32>(o0, finish(l10, h10, w1, x0, i, k), 4);
    store<f32>(o0 + stride, finish(l01, h01, w0, x1, i, k));
    store<f32>(o0 + stride, finish(l11, h11, w1, x1, i, k), 4);
    store<f32>(o0 + 2 * stride, finish(l02, h02, w0, x2, i, k));
    store<f32>(o0 + 2 * stride, finish(l12, h12, w1, x2, i, k), 4);
  }
  for (; t < t1; t++) {
    const xr = x + <usize>t * rowBytes;
    const o0 = out + <usize>t * stride;
    store<f32>(o0, dot1(w0, xr, k));
    store<f32>(o0, dot1(w1, xr, k), 4);
  }
}
