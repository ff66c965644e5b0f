/**
 * The light loops around the recurrent scans (delta-net-scan.ts, mamba2-scan.ts), so a step's rows never run through
 * TypeScript: the causal depthwise conv1d + SiLU of DeltaNet and Mamba-2 layers with its window update, the L2 norm
 * of DeltaNet's q and k heads, and DeltaNet's gated RMSNorm. f32 sums as ggml's ssm_conv.
 */
import { expf, expf4 } from './fast-math';

/**
 * out[t, c] = SiLU(Σ_k kernel[c, k] · window[t + k, c] + bias[c]) over the window [state ‖ x] of taps − 1 + n rows,
 * then state = the window's last taps − 1 rows.
 *   state  f32 [taps − 1, C] conv window, updated in place
 *   x      f32 [n, xStride] (C channels used);  kernel f32 [C, taps];  bias f32 [C] or 0 (none)
 *   out    f32 [n, outStride]
 */
export function conv_silu(
  state: usize,
  x: usize,
  xStride: i32,
  kernel: usize,
  bias: usize,
  out: usize,
  outStride: i32,
  n: i32,
  C: i32,
  taps: i32,
): void {
  const w = taps - 1;
  const rowBytes = <usize>C << 2;
  for (let t = 0; t < n; t++) {
    const o = out + ((<usize>t * <usize>outStride) << 2);
    for (let k = 0; k < taps; k++) {
      const src = t + k; // row of [state ‖ x]
      const row = src < w ? state + <usize>src * rowBytes : x + ((<usize>(src - w) * <usize>xStride) << 2);
      let c = 0;
      if (ASC_FEATURE_SIMD) {
        for (; c + 4 <= C; c += 4) {
          const kp = kernel + ((<usize>c * <usize>taps + <usize>k) << 2);
          const ts = <usize>taps << 2;
          let kv = f32x4.splat(load<f32>(kp));
          kv = f32x4.replace_lane(kv, 1, load<f32>(kp + ts));
          kv = f32x4.replace_lane(kv, 2, load<f32>(kp + 2 * ts));
          kv = f32x4.replace_lane(kv, 3, load<f32>(kp + 3 * ts));
          const off = <usize>c << 2;
          const p = f32x4.mul(kv, v128.load(row + off));
          v128.store(o + off, k == 0 ? p : f32x4.add(v128.load(o + off), p));
        }
      }
      for (; c < C; c++) {
        const off = <usize>c << 2;
        const p = load<f32>(kernel + ((<usize>c * <usize>taps + <usize>k) << 2)) * load<f32>(row + off);
        store<f32>(o + off, k == 0 ? p : load<f32>(o + off) + p);
      }
    }
    let c = 0;
    if (ASC_FEATURE_SIMD) {
      const one = f32x4.splat(1);
      for (; c + 4 <= C; c += 4) {
        const off = <usize>c << 2;
        let s = v128.load(o + off);
        if (bias) s = f32x4.add(s, v128.load(bias + off));
        v128.store(o + off, f32x4.div(s, f32x4.add(one, expf4(f32x4.neg(s)))));
      }
    }
    for (; c < C; c++) {
      const off = <usize>c << 2;
      let s = load<f32>(o + off);
      if (bias) s += load<f32>(bias + off);
      store<f32>(o + off, s / (1 + expf(min<f32>(-s, 88.7))));
    }
  }
  // The window slides n rows: row r becomes row n + r of [state ‖ x] (ascending: n + r ≥ r is still unread).
  for (let r = 0; r < w; r++) {
    const src = n + r;
    const from = src < w ? state + <usize>src * rowBytes : x + ((<usize>(src - w) * <usize>xStride) << 2);
    memory.copy(state + <usize>r * rowBytes, from, rowBytes);
  }
}

/** x[t, h·headDim …] /= sqrt(Σx² + eps) for heads h < nHeads of each of n rows ([n, stride] f32, in place). */
export function l2norm_heads(x: usize, stride: i32, n: i32, nHeads: i32, headDim: i32, eps: f32): void {
  for (let t = 0; t < n; t++) {
    for (let h = 0; h < nHeads; h++) {
      const p = x + ((<usize>t * <usize>stride + <usize>(h * headDim)) << 2);
      const inv: f32 = 1 / Mathf.sqrt(sumSquares(p, headDim) + eps);
      scaleBy(p, headDim, inv, 0, 0);
    }
  }
}

/**
 * DeltaNet's gated norm, in place: out[t, h·headV …] = RMSNorm(o) · norm · SiLU(z) per value head.
 *   out f32 [n, outStride];  z f32 [n, zStride];  norm f32 [headV]
 */
export function gated_norm_heads(
  out: usize,
  outStride: i32,
  z: usize,
  zStride: i32,
  norm: usize,
  n: i32,
  nHeads: i32,
  headV: i32,
  eps: f32,
): void {
  for (let t = 0; t < n; t++) {
    for (let h = 0; h < nHeads; h++) {
      const p = out + ((<usize>t * <usize>outStride + <usize>(h * headV)) << 2);
      const zp = z + ((<usize>t * <usize>zStride + <usize>(h * headV)) << 2);
      const inv: f32 = 1 / Mathf.sqrt(sumSquares(p, headV) / <f32>headV + eps);
      scaleBy(p, headV, inv, norm, zp);
    }
  }
}

/** Σ p[i]² over len values. */
// @ts-ignore: decorator
@inline function sumSquares(p: usize, len: i32): f32 {
  let i = 0;
  let ss: f32 = 0;
  if (ASC_FEATURE_SIMD) {
    let a = f32x4.splat(0);
    for (; i + 4 <= len; i += 4) {
      const v = v128.load(p + (<usize>i << 2));
      a = f32x4.add(a, f32x4.mul(v, v));
    }
    ss = f32x4.extract_lane(a, 0) + f32x4.extract_lane(a, 1) + f32x4.extract_lane(a, 2) + f32x4.extract_lane(a, 3);
  }
  for (; i < len; i++) {
    const v = load<f32>(p + (<usize>i << 2));
    ss += v * v;
  }
  return ss;
}

/** p[i] *= s (· w[i] · SiLU(z[i]) when w, z are given) over len values. */
// @ts-ignore: decorator
@inline function scaleBy(p: usize, len: i32, s: f32, w: usize, z: usize): void {
  let i = 0;
  if (ASC_FEATURE_SIMD) {
    const sv = f32x4.splat(s);
    const one = f32x4.splat(1);
    for (; i + 4 <= len; i += 4) {
      const off = <usize>i << 2;
      let v = f32x4.mul(v128.load(p + off), sv);
      if (w) {
        const zv = v128.load(z + off);
        v = f32x4.mul(f32x4.mul(v, v128.load(w + off)), f32x4.div(zv, f32x4.add(one, expf4(f32x4.neg(zv)))));
      }
      v128.store(p + off, v);
    }
  }
  for (; i < len; i++) {
    const off = <usize>i << 2;
    let v = load<f32>(p + off) * s;
    if (w) {
      const zv = load<f32>(z + off);
      v = v * load<f32>(w + off) * (zv / (1 + expf(min<f32>(-zv, 88.7))));
    }
    store<f32>(p + off, v);
  }
}
