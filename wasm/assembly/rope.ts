/**
 * Rotary position embedding of n rows in place, bit-identical to the host loop it replaces
 * (src/backend/wasm/row-ops.ts `ropeRotate`): each pair (x0, x1) becomes (x0·cos − x1·sin, x0·sin + x1·cos) in f64
 * (the f32 values and the host's f64 tables, products and sums as JS numbers do them), rounded to f32. Pairs are
 * (2i, 2i + 1) for 'norm', (i, i + half) for 'neox' (SIMD builds: two pairs at once in f64 lanes); dimensions ≥ nRot
 * of each head pass through.
 *   x  f32 [n, cols] (heads of headDim)     cos, sin  f64 [n, half] (the host's RopeTables, copied into the heap)
 */

/** One pair at a, b rotated by (c, s). */
// @ts-ignore: decorator
@inline function rotate(a: usize, b: usize, c: f64, s: f64): void {
  const x0 = <f64>load<f32>(a);
  const x1 = <f64>load<f32>(b);
  store<f32>(a, <f32>(x0 * c - x1 * s));
  store<f32>(b, <f32>(x0 * s + x1 * c));
}

/** See the file header; `norm` 1 = 'norm' pairs, 0 = 'neox'. */
export function rope_rows(x: usize, cols: i32, n: i32, headDim: i32, half: i32, norm: i32, cos: usize, sin: usize): void {
  for (let r = 0; r < n; r++) {
    const row = x + (<usize>(r * cols) << 2);
    const cr = cos + (<usize>(r * half) << 3);
    const sr = sin + (<usize>(r * half) << 3);
    for (let base = 0; base < cols; base += headDim) {
      const h = row + (<usize>base << 2);
      let i = 0;
      if (norm != 0) {
        for (; i < half; i++) {
          const a = h + (<usize>i << 3);
          rotate(a, a + 4, load<f64>(cr + (<usize>i << 3)), load<f64>(sr + (<usize>i << 3)));
        }
        continue;
      }
      const hb = h + (<usize>half << 2);
      if (ASC_FEATURE_SIMD) {
        for (; i + 2 <= half; i += 2) {
          const a = h + (<usize>i << 2);
          const b = hb + (<usize>i << 2);
          const x0 = f64x2.promote_low_f32x4(v128.load64_zero(a));
          const x1 = f64x2.promote_low_f32x4(v128.load64_zero(b));
          const c = v128.load(cr + (<usize>i << 3));
          const s = v128.load(sr + (<usize>i << 3));
          v128.store64_lane(a, f32x4.demote_f64x2_zero(f64x2.sub(f64x2.mul(x0, c), f64x2.mul(x1, s))), 0);
          v128.store64_lane(b, f32x4.demote_f64x2_zero(f64x2.add(f64x2.mul(x0, s), f64x2.mul(x1, c))), 0);
        }
      }
      for (; i < half; i++) {
        rotate(h + (<usize>i << 2), hb + (<usize>i << 2), load<f64>(cr + (<usize>i << 3)), load<f64>(sr + (<usize>i << 3)));
      }
    }
  }
}
