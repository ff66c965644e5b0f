/**
 * Activation quantization for the fused matvecs: each row of x (f32) becomes Q8 blocks of 32, as llama.cpp's
 * `quantize_row_q8_0` does (but with an f32 scale). Layout of one quantized row of k elements (k % 32 == 0):
 *   qs     i8  [k]          round(x / d)
 *   d      f32 [k / 32]     amax / 127 of each block
 *   s      f32 [k / 32]     d · Σ qs of each block (folds the weights' zero points / offsets in)
 *   isum16 i32 [k / 16]     Σ qs of each 16-lane half-block (Q6_K's −32 offset, whose scales change every 16)
 * Row stride = q8RowBytes(k) = 1.5 · k bytes.
 */

/** Bytes of one quantized activation row of k elements. */
// @ts-ignore: decorator
@inline export function q8RowBytes(k: i32): usize {
  return <usize>(k + (k >> 2) + (k >> 2));
}

/**
 * Quantizes n rows of x (f32 [n, xStride], first k columns) into `out` (n rows of q8RowBytes(k)).
 * Rounding is to nearest-even in every build so scalar and SIMD builds produce identical blocks.
 */
export function quantize_q8(x: usize, xStride: i32, n: i32, k: i32, out: usize): void {
  const nb = k >> 5;
  const rowBytes = q8RowBytes(k);
  for (let t = 0; t < n; t++) {
    const xr = x + (<usize>t * <usize>xStride << 2);
    const qs = out + <usize>t * rowBytes;
    const dp = qs + <usize>k;
    const sp = dp + (<usize>nb << 2);
    const hp = sp + (<usize>nb << 2);
    for (let b = 0; b < nb; b++) {
      const xb = xr + (<usize>b << 7);
      const qb = qs + (<usize>b << 5);
      if (ASC_FEATURE_SIMD) {
        let amax = f32x4.splat(0);
        for (let i = 0; i < 8; i++) amax = f32x4.max(amax, f32x4.abs(v128.load(xb + (<usize>i << 4))));
        const m = max(max(f32x4.extract_lane(amax, 0), f32x4.extract_lane(amax, 1)), max(f32x4.extract_lane(amax, 2), f32x4.extract_lane(amax, 3)));
        const d: f32 = m / 127;
        const id = f32x4.splat(d != 0 ? <f32>1 / d : 0);
        let half0 = i32x4.splat(0);
        let half1 = i32x4.splat(0);
        for (let i = 0; i < 2; i++) {
          const base = xb + (<usize>i << 6);
          const a = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v128.load(base), id)));
          const b2 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v128.load(base, 16), id)));
          const c = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v128.load(base, 32), id)));
          const e = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v128.load(base, 48), id)));
          const s = i32x4.add(i32x4.add(a, b2), i32x4.add(c, e));
          if (i == 0) half0 = s; else half1 = s;
          v128.store(qb + (<usize>i << 4), i8x16.narrow_i16x8_s(i16x8.narrow_i32x4_s(a, b2), i16x8.narrow_i32x4_s(c, e)));
        }
        const s0 = hsum(half0);
        const s1 = hsum(half1);
        store<f32>(dp + (<usize>b << 2), d);
        store<f32>(sp + (<usize>b << 2), d * <f32>(s0 + s1));
        store<i32>(hp + (<usize>b << 3), s0);
        store<i32>(hp + (<usize>b << 3), s1, 4);
      } else {
        let m: f32 = 0;
        for (let i = 0; i < 32; i++) m = max(m, abs(load<f32>(xb + (<usize>i << 2))));
        const d: f32 = m / 127;
        const id: f32 = d != 0 ? <f32>1 / d : 0;
        let s0: i32 = 0;
        let s1: i32 = 0;
        for (let i = 0; i < 32; i++) {
          const q = <i32>nearest(load<f32>(xb + (<usize>i << 2)) * id);
          store<i8>(qb + <usize>i, <i8>q);
          if (i < 16) s0 += q; else s1 += q;
        }
        store<f32>(dp + (<usize>b << 2), d);
        store<f32>(sp + (<usize>b << 2), d * <f32>(s0 + s1));
        store<i32>(hp + (<usize>b << 3), s0);
        store<i32>(hp + (<usize>b << 3), s1, 4);
      }
    }
  }
}

// @ts-ignore: decorator
@inline function hsum(v: v128): i32 {
  return i32x4.extract_lane(v, 0) + i32x4.extract_lane(v, 1) + i32x4.extract_lane(v, 2) + i32x4.extract_lane(v, 3);
}
