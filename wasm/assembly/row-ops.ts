/**
 * Row ops every model runs between its matrix products, bit-identical to the host loops of
 * src/backend/wasm/row-ops.ts that they replace (and which the cpu reference keeps running):
 * - `rms_norm_rows`: dst = src / √(Σ src² / g + eps) · w per group of g values; the sum of squares accumulated in f64
 *   in index order (each f32 square is exact in f64), the output (x · inv) · w computed in f64 and rounded to f32,
 *   exactly as the JS numbers do. Four groups run side by side (four independent f64 sums: the order within each
 *   group is kept, only the latency of the chains overlaps); SIMD builds compute the outputs two f64 lanes at a time.
 * - `add_rows`: dst = a + b, f32 lane by lane.
 *   dst, src  f32 [groups, g]     w  f32 [g] (byte address, 0 = none)     a, b, dst  f32 [len]
 */

/** Σ x² over the g f32 values at `x`, in f64, in index order (the host's `sum += x * x`). */
// @ts-ignore: decorator
@inline function sumSquares(x: usize, g: i32): f64 {
  let s: f64 = 0;
  for (let j = 0; j < g; j++) {
    const v = <f64>load<f32>(x + (<usize>j << 2));
    s += v * v;
  }
  return s;
}

/** dst[j] = f32((src[j] · inv) · w[j]) (w = 0: f32(src[j] · inv)) for j < g. */
// @ts-ignore: decorator
@inline function scaleRow(d: usize, s: usize, w: usize, g: i32, inv: f64): void {
  let j = 0;
  if (ASC_FEATURE_SIMD) {
    const iv = f64x2.splat(inv);
    for (; j + 4 <= g; j += 4) {
      const o = <usize>j << 2;
      const x = v128.load(s + o);
      let lo = f64x2.mul(f64x2.promote_low_f32x4(x), iv);
      let hi = f64x2.mul(f64x2.promote_low_f32x4(i32x4.shuffle(x, x, 2, 3, 2, 3)), iv);
      if (w != 0) {
        const wv = v128.load(w + o);
        lo = f64x2.mul(lo, f64x2.promote_low_f32x4(wv));
        hi = f64x2.mul(hi, f64x2.promote_low_f32x4(i32x4.shuffle(wv, wv, 2, 3, 2, 3)));
      }
      const a = f32x4.demote_f64x2_zero(lo);
      const b = f32x4.demote_f64x2_zero(hi);
      v128.store(d + o, i32x4.shuffle(a, b, 0, 1, 4, 5));
    }
  }
  for (; j < g; j++) {
    const o = <usize>j << 2;
    const v = <f64>load<f32>(s + o) * inv;
    store<f32>(d + o, <f32>(w != 0 ? v * <f64>load<f32>(w + o) : v));
  }
}

/** See the file header: `groups` groups of g values, src → dst (the same place or apart), eps as the host's. */
export function rms_norm_rows(dst: usize, src: usize, w: usize, g: i32, groups: i32, eps: f64): void {
  const bytes = <usize>g << 2;
  const gf = <f64>g;
  let r = 0;
  for (; r + 4 <= groups; r += 4) {
    const s0 = src + <usize>r * bytes;
    const s1 = s0 + bytes;
    const s2 = s1 + bytes;
    const s3 = s2 + bytes;
    let a0: f64 = 0, a1: f64 = 0, a2: f64 = 0, a3: f64 = 0;
    for (let j = 0; j < g; j++) {
      const o = <usize>j << 2;
      const v0 = <f64>load<f32>(s0 + o);
      const v1 = <f64>load<f32>(s1 + o);
      const v2 = <f64>load<f32>(s2 + o);
      const v3 = <f64>load<f32>(s3 + o);
      a0 += v0 * v0;
      a1 += v1 * v1;
      a2 += v2 * v2;
      a3 += v3 * v3;
    }
    const d0 = dst + <usize>r * bytes;
    scaleRow(d0, s0, w, g, 1 / Math.sqrt(a0 / gf + eps));
    scaleRow(d0 + bytes, s1, w, g, 1 / Math.sqrt(a1 / gf + eps));
    scaleRow(d0 + 2 * bytes, s2, w, g, 1 / Math.sqrt(a2 / gf + eps));
    scaleRow(d0 + 3 * bytes, s3, w, g, 1 / Math.sqrt(a3 / gf + eps));
  }
  for (; r < groups; r++) {
    const s = src + <usize>r * bytes;
    scaleRow(dst + <usize>r * bytes, s, w, g, 1 / Math.sqrt(sumSquares(s, g) / gf + eps));
  }
}

/** See the file header: len f32 values, dst = a + b (any of the three may be the same place). */
export function add_rows(dst: usize, a: usize, b: usize, len: i32): void {
  let i = 0;
  if (ASC_FEATURE_SIMD) {
    for (; i + 4 <= len; i += 4) {
      const o = <usize>i << 2;
      v128.store(dst + o, f32x4.add(v128.load(a + o), v128.load(b + o)));
    }
  }
  for (; i < len; i++) {
    const o = <usize>i << 2;
    store<f32>(dst + o, load<f32>(a + o) + load<f32>(b + o));
  }
}
