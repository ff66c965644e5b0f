/**
 * MXFP4 weights (ggml block_mxfp4, 17 bytes: u8 e (E8M0); u8 qs[16], byte j = element j low nibble, j + 16 high)
 * · Q8 activation rows (wasm/assembly/q8-activations.ts). Per block d_w · d_x · Σ kv[q]·qx with kv = ggml's
 * kvalues_mxfp4 (E2M1 doubled, −12 … 12) and d_w = 2^(e − 128) (ggml_e8m0_to_fp32_half). The simd builds look the
 * nibbles up with one i8x16.swizzle over a constant vector; the scalar build computes kv from the nibble (the module
 * has no data segment).
 */

import { q8RowBytes } from './q8-activations';
import { dotI8I8, fmaF32x4, hiNibbles, hsumF32x4 } from './simd-dot';

const BLOCK_BYTES: usize = 17;

/** ggml_e8m0_to_fp32_half(e): f32 bits (e − 1) << 23, or the subnormal 0x00200000 << e for e < 2. */
// @ts-ignore: decorator
@inline function e8m0Half(e: u32): f32 {
  return reinterpret<f32>(e < 2 ? <u32>0x00200000 << e : (e - 1) << 23);
}

/** kvalues_mxfp4[q] for a nibble q (0, 1, 2, 3, 4, 6, 8, 12, then the same negated). */
// @ts-ignore: decorator
@inline function kvalue(q: i32): i32 {
  const m = q & 7;
  const v = m < 4 ? m : m == 7 ? 12 : (m - 2) << 1;
  return q & 8 ? -v : v;
}

/** One weight row · one Q8 activation row of k elements (nb blocks). */
// @ts-ignore: decorator
@inline function rowDotMxfp4(wr: usize, xq: usize, nb: i32, k: i32): f32 {
  const xd = xq + <usize>k; // the blocks' f32 d follow the k quants
  if (ASC_FEATURE_SIMD) {
    const table = i8x16(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12);
    const mask = i8x16.splat(0x0f);
    let acc0 = f32x4.splat(0);
    let acc1 = f32x4.splat(0);
    for (let b = 0; b < nb; b++) {
      const w0 = wr + <usize>b * BLOCK_BYTES;
      const x0 = xq + (<usize>b << 5);
      const q = v128.load(w0, 1);
      const lo = i8x16.swizzle(table, v128.and(q, mask));
      const hi = i8x16.swizzle(table, hiNibbles(q, mask));
      const p = i32x4.add(dotI8I8(lo, v128.load(x0)), dotI8I8(hi, v128.load(x0, 16)));
      const dd = f32x4.splat(e8m0Half(<u32>load<u8>(w0)) * load<f32>(xd + (<usize>b << 2)));
      if (b & 1) acc1 = fmaF32x4(acc1, f32x4.convert_i32x4_s(p), dd);
      else acc0 = fmaF32x4(acc0, f32x4.convert_i32x4_s(p), dd);
    }
    return hsumF32x4(f32x4.add(acc0, acc1));
  } else {
    let acc: f32 = 0;
    for (let b = 0; b < nb; b++) {
      const w0 = wr + <usize>b * BLOCK_BYTES;
      const x0 = xq + (<usize>b << 5);
      let sumi: i32 = 0;
      for (let j = 0; j < 16; j++) {
        const q = <i32>load<u8>(w0 + 1 + <usize>j);
        sumi += kvalue(q & 15) * <i32>load<i8>(x0 + <usize>j) + kvalue(q >> 4) * <i32>load<i8>(x0 + 16 + <usize>j);
      }
      acc += <f32>sumi * (e8m0Half(<u32>load<u8>(w0)) * load<f32>(xd + (<usize>b << 2)));
    }
    return acc;
  }
}

/** MXFP4 weights (GGUF rows) · Q8 activations: rows r0 … r1−1 for n tokens (signature as gemv_q4_0). */
export function gemv_mxfp4(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  const nb = k >> 5;
  const rowBytes = <usize>nb * BLOCK_BYTES;
  const xrb = q8RowBytes(k);
  for (let r = r0; r < r1; r++) {
    const wr = w + <usize>r * rowBytes;
    for (let t = 0; t < n; t++) {
      store<f32>(out + ((<usize>t * <usize>outStride + <usize>r) << 2), rowDotMxfp4(wr, x + <usize>t * xrb, nb, k));
    }
  }
}
