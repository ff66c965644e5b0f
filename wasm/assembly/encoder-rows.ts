/**
 * The row ops encoders add (bert family), bit-identical to the host's TypeScript (src/backend/host-encoder-ops.ts),
 * which the cpu reference backend keeps running:
 * - `layer_norm_rows`: out = (x − mean) / √(var + eps) · w + b per row, mean and variance accumulated in f64 and the
 *   output computed in f64 then rounded to f32, exactly as `hostLayerNorm` (JS numbers are f64);
 * - `gelu_f16_rows`: ggml's CPU GELU (GGML_GELU_FP16): x rounded to f16 (nearest even) indexes a table of the f16
 *   results (the host fills it once: `geluF16Table`); 0 at x ≤ −10, x itself at x ≥ 10, NaN stays NaN.
 * Scalar code in every build: both are O(rows · cols) beside the matrix products; what they replace is the JS loop.
 *   x, out  f32 [n, xCols] / [n, outCols]     w, b  f32 [cols]     table  f32 [65536]
 */

/** See the file header; w or b at address 0 means none (the host never places a buffer at 0). */
export function layer_norm_rows(out: usize, outCols: i32, x: usize, xCols: i32, w: usize, b: usize, eps: f64, n: i32): void {
  const cols = xCols;
  for (let r = 0; r < n; r++) {
    const xr = x + (<usize>(r * xCols) << 2);
    const or = out + (<usize>(r * outCols) << 2);
    let sum: f64 = 0;
    for (let j = 0; j < cols; j++) sum += <f64>load<f32>(xr + (<usize>j << 2));
    const mean = sum / <f64>cols;
    let ss: f64 = 0;
    for (let j = 0; j < cols; j++) {
      const d = <f64>load<f32>(xr + (<usize>j << 2)) - mean;
      ss += d * d;
    }
    const inv = 1 / Math.sqrt(ss / <f64>cols + eps);
    for (let j = 0; j < cols; j++) {
      const o = <usize>j << 2;
      const v = (<f64>load<f32>(xr + o) - mean) * inv;
      const wv: f64 = w != 0 ? <f64>load<f32>(w + o) : 1;
      const bv: f64 = b != 0 ? <f64>load<f32>(b + o) : 0;
      store<f32>(or + o, <f32>(v * wv + bv));
    }
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
