/**
 * The row ops encoders add (bert family), bit-identical to the host's TypeScript (src/backend/host-encoder-ops.ts),
 * which the cpu reference backend keeps running:
 * - `layer_norm_rows`: out = (x − mean) / √(var + eps) · w + b per row, mean and variance accumulated in f64 and the
 *   output computed in f64 then rounded to f32, exactly as `hostLayerNorm` (JS numbers are f64);
 * - `gelu_f16_rows`: ggml's CPU GELU (GGML_GELU_FP16): x rounded to f16 (nearest even) indexes a table of the f16
 *   results (the host fills it once: `geluF16Table`); 0 at x ≤ −10, x itself at x ≥ 10, NaN stays NaN.
 * LayerNorm runs four rows' f64 sums side by side (each sum in its own index order: only the add latencies overlap)
 * and, in SIMD builds, the outputs two f64 lanes at a time (3.4 → 1.1 ns per value at bge-small's 384 columns);
 * GELU converts four values at once.
 *   x, out  f32 [n, xCols] / [n, outCols]     w, b  f32 [cols]     table  f32 [65536]
 */

/** Σ x over `cols` f32 values at `xr`, in f64, in index order. */
// @ts-ignore: decorator
@inline function sumOf(xr: usize, cols: i32): f64 {
  let sum: f64 = 0;
  for (let j = 0; j < cols; j++) sum += <f64>load<f32>(xr + (<usize>j << 2));
  return sum;
}

/** Σ (x − mean)² over `cols` f32 values at `xr`, in f64, in index order. */
// @ts-ignore: decorator
@inline function squaresOf(xr: usize, cols: i32, mean: f64): f64 {
  let ss: f64 = 0;
  for (let j = 0; j < cols; j++) {
    const d = <f64>load<f32>(xr + (<usize>j << 2)) - mean;
    ss += d * d;
  }
  return ss;
}

/** out[j] = f32(((x[j] − mean) · inv) · w[j] + b[j]) for j < cols (w = 1, b = 0 where absent); SIMD: f64 lanes. */
// @ts-ignore: decorator
@inline function normRow(or: usize, xr: usize, w: usize, b: usize, cols: i32, mean: f64, inv: f64): void {
  let j = 0;
  if (ASC_FEATURE_SIMD) {
    const mv = f64x2.splat(mean);
    const iv = f64x2.splat(inv);
    const one = f64x2.splat(1);
    const zero = f64x2.splat(0);
    for (; j + 4 <= cols; j += 4) {
      const o = <usize>j << 2;
      const xv = v128.load(xr + o);
      let lo = f64x2.mul(f64x2.sub(f64x2.promote_low_f32x4(xv), mv), iv);
      let hi = f64x2.mul(f64x2.sub(f64x2.promote_low_f32x4(i32x4.shuffle(xv, xv, 2, 3, 2, 3)), mv), iv);
      let wl = one, wh = one, bl = zero, bh = zero;
      if (w != 0) {
        const wv = v128.load(w + o);
        wl = f64x2.promote_low_f32x4(wv);
        wh = f64x2.promote_low_f32x4(i32x4.shuffle(wv, wv, 2, 3, 2, 3));
      }
      if (b != 0) {
        const bv = v128.load(b + o);
        bl = f64x2.promote_low_f32x4(bv);
        bh = f64x2.promote_low_f32x4(i32x4.shuffle(bv, bv, 2, 3, 2, 3));
      }
      lo = f64x2.add(f64x2.mul(lo, wl), bl);
      hi = f64x2.add(f64x2.mul(hi, wh), bh);
      v128.store(or + o, i32x4.shuffle(f32x4.demote_f64x2_zero(lo), f32x4.demote_f64x2_zero(hi), 0, 1, 4, 5));
    }
  }
  for (; j < cols; j++) {
    const o = <usize>j << 2;
    const v = (<f64>load<f32>(xr + o) - mean) * inv;
    const wv: f64 = w != 0 ? <f64>load<f32>(w + o) : 1;
    const bv: f64 = b != 0 ? <f64>load<f32>(b + o) : 0;
    store<f32>(or + o, <f32>(v * wv + bv));
  }
}

/**
 * See the file header; w or b at address 0 means none (the host never places a buffer at 0). Rows go four at a time
 * where out and x are apart (or the same rows): their f64 sums side by side (each in its own index order), then each
 * row's outputs.
 */
export function layer_norm_rows(out: usize, outCols: i32, x: usize, xCols: i32, w: usize, b: usize, eps: f64, n: i32): void {
  const cols = xCols;
  const cf = <f64>cols;
  const xs = <usize>xCols << 2;
  const os = <usize>outCols << 2;
  const apart = (out == x && outCols == xCols) || out + <usize>n * os <= x || x + <usize>n * xs <= out;
  let r = 0;
  if (apart) {
    for (; r + 4 <= n; r += 4) {
      const x0 = x + <usize>r * xs;
      const x1 = x0 + xs;
      const x2 = x1 + xs;
      const x3 = x2 + xs;
      let s0: f64 = 0, s1: f64 = 0, s2: f64 = 0, s3: f64 = 0;
      for (let j = 0; j < cols; j++) {
        const o = <usize>j << 2;
        s0 += <f64>load<f32>(x0 + o);
        s1 += <f64>load<f32>(x1 + o);
        s2 += <f64>load<f32>(x2 + o);
        s3 += <f64>load<f32>(x3 + o);
      }
      const m0 = s0 / cf, m1 = s1 / cf, m2 = s2 / cf, m3 = s3 / cf;
      let q0: f64 = 0, q1: f64 = 0, q2: f64 = 0, q3: f64 = 0;
      for (let j = 0; j < cols; j++) {
        const o = <usize>j << 2;
        const d0 = <f64>load<f32>(x0 + o) - m0;
        const d1 = <f64>load<f32>(x1 + o) - m1;
        const d2 = <f64>load<f32>(x2 + o) - m2;
        const d3 = <f64>load<f32>(x3 + o) - m3;
        q0 += d0 * d0;
        q1 += d1 * d1;
        q2 += d2 * d2;
        q3 += d3 * d3;
      }
      const o0 = out + <usize>r * os;
      normRow(o0, x0, w, b, cols, m0, 1 / Math.sqrt(q0 / cf + eps));
      normRow(o0 + os, x1, w, b, cols, m1, 1 / Math.sqrt(q1 / cf + eps));
      normRow(o0 + 2 * os, x2, w, b, cols, m2, 1 / Math.sqrt(q2 / cf + eps));
      normRow(o0 + 3 * os, x3, w, b, cols, m3, 1 / Math.sqrt(q3 / cf + eps));
    }
  }
  for (; r < n; r++) {
    const xr = x + <usize>r * xs;
    const mean = sumOf(xr, cols) / cf;
    normRow(out + <usize>r * os, xr, w, b, cols, mean, 1 / Math.sqrt(squaresOf(xr, cols, mean) / cf + eps));
  }
}

/** f16 bits of an f32 whose f16 exponent would be ≤ 0 (subnormal or zero), rounded to nearest even. */
// @ts-ignore: decorator
@inline function f16SubnormalBits(u: u32): u32 {
  const sign = (u >>> 16) & 0x8000;
  const abs = u & 0x7fffffff;
  const e = <i32>(abs >>> 23) - 112;
  if (e < -10) return sign; // below half the smallest subnormal: zero
  const m = (abs & 0x7fffff) | 0x800000;
  const shift = <u32>(14 - e); // 14 … 24
  let h = m >>> shift;
  const rem = m & ((<u32>1 << shift) - 1);
  const half = <u32>1 << (shift - 1);
  if (rem > half || (rem == half && (h & 1) == 1)) h++;
  return sign | h;
}

/**
 * See the file header: len f32 values at x, in place. SIMD builds convert four values to f16 bits at once (the same
 * integer steps as the scalar path) and look the table up lane by lane; a group of four with a value outside the
 * table's normal range (|x| ≥ 10, |x| < 2⁻¹⁴, NaN) goes through the scalar path.
 */
export function gelu_f16_rows(x: usize, len: i32, table: usize): void {
  let i = 0;
  if (ASC_FEATURE_SIMD) {
    for (; i + 4 <= len; i += 4) {
      const p = x + (<usize>i << 2);
      const u = v128.load(p);
      const e = i32x4.sub(i32x4.shr_u(v128.and(u, i32x4.splat(0x7f800000)), 23), i32x4.splat(112));
      const inside = v128.and(i32x4.gt_s(e, i32x4.splat(0)), f32x4.lt(f32x4.abs(u), f32x4.splat(10)));
      if (!i32x4.all_true(inside)) {
        geluScalar(p, 4, table);
        continue;
      }
      let h = v128.or(v128.and(i32x4.shr_u(u, 16), i32x4.splat(0x8000)), i32x4.shl(e, 10));
      h = v128.or(h, v128.and(i32x4.shr_u(u, 13), i32x4.splat(0x3ff)));
      const rem = v128.and(u, i32x4.splat(0x1fff));
      const odd = i32x4.eq(v128.and(h, i32x4.splat(1)), i32x4.splat(1));
      const tie = v128.and(i32x4.eq(rem, i32x4.splat(0x1000)), odd);
      h = i32x4.sub(h, v128.or(i32x4.gt_s(rem, i32x4.splat(0x1000)), tie)); // + 1 where rounding up
      store<f32>(p, load<f32>(table + (<usize>i32x4.extract_lane(h, 0) << 2)));
      store<f32>(p, load<f32>(table + (<usize>i32x4.extract_lane(h, 1) << 2)), 4);
      store<f32>(p, load<f32>(table + (<usize>i32x4.extract_lane(h, 2) << 2)), 8);
      store<f32>(p, load<f32>(table + (<usize>i32x4.extract_lane(h, 3) << 2)), 12);
    }
  }
  geluScalar(x + (<usize>i << 2), len - i, table);
}

/** gelu_f16_rows one value at a time. */
function geluScalar(x: usize, len: i32, table: usize): void {
  for (let i = 0; i < len; i++) {
    const p = x + (<usize>i << 2);
    const v = load<f32>(p);
    if (v <= -10) {
      store<f32>(p, 0);
      continue;
    }
    if (v >= 10 || v != v) continue;
    const u = load<u32>(p);
    const e = <i32>((u >>> 23) & 0xff) - 112; // f16 biased exponent
    let h: u32;
    if (e <= 0) h = f16SubnormalBits(u);
    else {
      h = ((u >>> 16) & 0x8000) | (<u32>e << 10) | ((u >>> 13) & 0x3ff);
      const rem = u & 0x1fff;
      if (rem > 0x1000 || (rem == 0x1000 && (h & 1) == 1)) h++; // round to nearest even
    }
    store<f32>(p, load<f32>(table + (<usize>h << 2)));
  }
}
