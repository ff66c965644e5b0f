/**
 * Multi-token products of float weights (the vision encoder's patch GEMM and blocks, encoder embedders, any F32/F16
 * prefill): `gemm_f32` computes tiles of 3 rows × 3 tokens of f32 rows; `gemm_f16` runs the same tiles on F16 rows
 * converted three at a time into L1-resident scratch per block of tokens (not once per token as `gemv_f16` does).
 * Every dot is accumulated exactly as gemv-float.ts's `rowDotFloat` does — two f32x4 accumulators over steps of 8 (lanes 0–3 and 4–7 of each step), their
 * sum reduced, then the tail lane by lane — so results are bit-identical to `gemv_f32` / `gemv_f16` on the same
 * weights. The tile runs the two accumulators as two passes over k: first lanes 0–3 of every step for all nine dots
 * (nine accumulators plus three weight and one activation vector fit x64's 16 vector registers; the nine partial
 * vectors are parked outside the loop), then lanes 4–7. Measured (same process, relaxed build, 1 thread, quiet
 * machine): 23–27 G multiply-adds per CPU-second against 11–14 for the earlier 2 × 3 tile holding both accumulators
 * (15 live vectors) and 14 for 4 × 3 / 3 × 4 tiles with one accumulator (16 live: spills).
 * Signatures are the GEMV one (w, x, out, k, r0, r1, n, outStride) so the thread pool splits them by rows.
 */
import { f16ToF32, f16x4ToF32x4, fmaF32x4, hsumF32x4 } from './simd-dot';

/** `count` F16 values at `w` as f32 at `out` (exact; the same conversion as gemv_f16). */
// @ts-ignore: decorator
@inline function convertF16(w: usize, out: usize, count: usize): void {
  let i: usize = 0;
  if (ASC_FEATURE_SIMD) {
    for (; i + 8 <= count; i += 8) {
      const h = v128.load(w + (i << 1));
      v128.store(out + (i << 2), f16x4ToF32x4(i32x4.extend_low_i16x8_u(h)));
      v128.store(out + (i << 2), f16x4ToF32x4(i32x4.extend_high_i16x8_u(h)), 16);
    }
  }
  for (; i < count; i++) store<f32>(out + (i << 2), f16ToF32(<u32>load<u16>(w + (i << 1))));
}

/** The reduction of one dot: hsum(lo + hi), then the lanes from byte `o` to `end` one by one (as rowDotFloat). */
// @ts-ignore: decorator
@inline function finish(lo: v128, hi: v128, wr: usize, xr: usize, o: usize, end: usize): f32 {
  let sum: f32 = hsumF32x4(f32x4.add(lo, hi));
  for (; o < end; o += 4) sum += load<f32>(wr + o) * load<f32>(xr + o);
  return sum;
}

/** One dot of an f32 row with an f32 activation row (rowDotFloat's order; `end8`: bytes in whole steps of 8). */
// @ts-ignore: decorator
@inline function dot1(wr: usize, xr: usize, end8: usize, end: usize): f32 {
  if (ASC_FEATURE_SIMD) {
    let a0 = f32x4.splat(0);
    let a1 = f32x4.splat(0);
    for (let o: usize = 0; o < end8; o += 32) {
      a0 = fmaF32x4(a0, v128.load(wr + o), v128.load(xr + o));
      a1 = fmaF32x4(a1, v128.load(wr + o, 16), v128.load(xr + o, 16));
    }
    return finish(a0, a1, wr, xr, end8, end);
  }
  let sum: f32 = 0;
  for (let o: usize = 0; o < end; o += 4) sum += load<f32>(wr + o) * load<f32>(xr + o);
  return sum;
}

/**
 * Rows r0 … r1−1 of f32 weights [nRows, k] · f32 activations [n, k] → out [n, outStride], in 3 × 3 tiles. Tokens go
 * in blocks of ~512 KB of activations (kept in cache while every row triple of the call passes over them); each row
 * triple stays in L1/L2 across its block.
 */
export function gemm_f32(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  const rowBytes = <usize>k << 2;
  const end8 = <usize>(k & ~7) << 2;
  const stride = <usize>outStride << 2;
  const block = max(3, (131072 / k / 3) * 3);
  for (let t0 = 0; t0 < n; t0 += block) {
    const t1 = min(n, t0 + block);
    let r = r0;
    if (ASC_FEATURE_SIMD) {
      for (; r + 3 <= r1; r += 3) rows3(w + <usize>r * rowBytes, x, out + (<usize>r << 2), k, t0, t1, stride, 0, 0);
    }
    for (; r < r1; r++) {
      const wr = w + <usize>r * rowBytes;
      const o = out + (<usize>r << 2);
      for (let t = t0; t < t1; t++) store<f32>(o + <usize>t * stride, dot1(wr, x + <usize>t * rowBytes, end8, rowBytes));
    }
  }
}

/**
 * gemm_f32 of F16 weights without an f32 copy of the whole matrix: per block of tokens, each row triple is converted
 * into three f32 rows of scratch (L1-resident, reused for the chunk's every triple) just before its tiles, so the
 * weights are read once per block as F16 and never written back as f32. The same conversion as gemv_f16 and the same
 * tiles as gemm_f32, so the same results bit for bit. `p`: [F16 weights [nRows, k] byte address, scratch
 * byte address] (u32 each); the scratch holds nRows·k f32 and this call (rows r0 … r1−1, one thread's chunk) uses
 * its rows r0 … min(r0 + 2, r1 − 1) only (three rows only when it has three), so concurrent chunks never share any.
 * While a triple's tiles run, the next triple's F16 rows are read ahead, four cache lines per token triple (WASM has
 * no prefetch; the loads' values are folded into the parameter block's third word): a layer's weights come cold
 * from memory, and converting them stalled on every line (+2–4 % GMAC/CPU-s over 24 distinct matrices in turn).
 */
export function gemm_f16(p: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  const w = <usize>load<u32>(p);
  const rowBytes = <usize>k << 2;
  const buf = <usize>load<u32>(p, 4) + <usize>r0 * rowBytes; // f32 [3, k]
  const end8 = <usize>(k & ~7) << 2;
  const stride = <usize>outStride << 2;
  const block = max(3, (131072 / k / 3) * 3);
  let sink: u32 = 0;
  for (let t0 = 0; t0 < n; t0 += block) {
    const t1 = min(n, t0 + block);
    let r = r0;
    if (ASC_FEATURE_SIMD) {
      for (; r + 3 <= r1; r += 3) {
        convertF16(w + ((<usize>r * <usize>k) << 1), buf, 3 * <usize>k);
        // The next triple's F16 rows (the chunk's first again after its last, for the next block) are read ahead.
        const next = r + 6 <= r1 ? r + 3 : t1 < n ? r0 : r;
        const pre = w + ((<usize>next * <usize>k) << 1);
        sink ^= rows3(buf, x, out + (<usize>r << 2), k, t0, t1, stride, pre, next != r ? pre + 6 * <usize>k : pre);
      }
    }
    for (; r < r1; r++) {
      convertF16(w + ((<usize>r * <usize>k) << 1), buf, <usize>k);
      const o = out + (<usize>r << 2);
      for (let t = t0; t < t1; t++) store<f32>(o + <usize>t * stride, dot1(buf, x + <usize>t * rowBytes, end8, rowBytes));
    }
  }
  store<u32>(p, sink, 8); // the read-ahead's loads, kept (an unused word of the parameter block)
}

/** Rows w0, w0 + k, w0 + 2k (f32) times tokens t0 … t1−1 of x → out (at the triple's first column) + t·stride. */
// @ts-ignore: decorator
@inline function rows3(w0: usize, x: usize, out: usize, k: i32, t0: i32, t1: i32, stride: usize, pre: usize, preEnd: usize): u32 {
  const rowBytes = <usize>k << 2;
  let sink: u32 = 0;
  const end8 = <usize>(k & ~7) << 2;
  const w1 = w0 + rowBytes;
  const w2 = w1 + rowBytes;
  let t = t0;
  for (; t + 3 <= t1; t += 3) {
    if (pre + 256 <= preEnd) {
      sink ^= load<u32>(pre) ^ load<u32>(pre, 64) ^ load<u32>(pre, 128) ^ load<u32>(pre, 192);
      pre += 256;
    }
    const x0 = x + <usize>t * rowBytes;
    const x1 = x0 + rowBytes;
    const x2 = x1 + rowBytes;
    // Pass 1: lanes 0–3 of every step of 8 (the gemv's first accumulator).
    let a00 = f32x4.splat(0), a01 = f32x4.splat(0), a02 = f32x4.splat(0);
    let a10 = f32x4.splat(0), a11 = f32x4.splat(0), a12 = f32x4.splat(0);
    let a20 = f32x4.splat(0), a21 = f32x4.splat(0), a22 = f32x4.splat(0);
    for (let o: usize = 0; o < end8; o += 32) {
      const b0 = v128.load(w0 + o);
      const b1 = v128.load(w1 + o);
      const b2 = v128.load(w2 + o);
      let v = v128.load(x0 + o);
      a00 = fmaF32x4(a00, b0, v);
      a10 = fmaF32x4(a10, b1, v);
      a20 = fmaF32x4(a20, b2, v);
      v = v128.load(x1 + o);
      a01 = fmaF32x4(a01, b0, v);
      a11 = fmaF32x4(a11, b1, v);
      a21 = fmaF32x4(a21, b2, v);
      v = v128.load(x2 + o);
      a02 = fmaF32x4(a02, b0, v);
      a12 = fmaF32x4(a12, b1, v);
      a22 = fmaF32x4(a22, b2, v);
    }
    const l00 = a00, l01 = a01, l02 = a02, l10 = a10, l11 = a11, l12 = a12, l20 = a20, l21 = a21, l22 = a22;
    // Pass 2: lanes 4–7 (the second accumulator).
    a00 = f32x4.splat(0);
    a01 = f32x4.splat(0);
    a02 = f32x4.splat(0);
    a10 = f32x4.splat(0);
    a11 = f32x4.splat(0);
    a12 = f32x4.splat(0);
    a20 = f32x4.splat(0);
    a21 = f32x4.splat(0);
    a22 = f32x4.splat(0);
    for (let o: usize = 16; o < end8; o += 32) {
      const b0 = v128.load(w0 + o);
      const b1 = v128.load(w1 + o);
      const b2 = v128.load(w2 + o);
      let v = v128.load(x0 + o);
      a00 = fmaF32x4(a00, b0, v);
      a10 = fmaF32x4(a10, b1, v);
      a20 = fmaF32x4(a20, b2, v);
      v = v128.load(x1 + o);
      a01 = fmaF32x4(a01, b0, v);
      a11 = fmaF32x4(a11, b1, v);
      a21 = fmaF32x4(a21, b2, v);
      v = v128.load(x2 + o);
      a02 = fmaF32x4(a02, b0, v);
      a12 = fmaF32x4(a12, b1, v);
      a22 = fmaF32x4(a22, b2, v);
    }
    const o0 = out + <usize>t * stride;
    const o1 = o0 + stride;
    const o2 = o1 + stride;
    store<f32>(o0, finish(l00, a00, w0, x0, end8, rowBytes));
    store<f32>(o0, finish(l10, a10, w1, x0, end8, rowBytes), 4);
    store<f32>(o0, finish(l20, a20, w2, x0, end8, rowBytes), 8);
    store<f32>(o1, finish(l01, a01, w0, x1, end8, rowBytes));
    store<f32>(o1, finish(l11, a11, w1, x1, end8, rowBytes), 4);
    store<f32>(o1, finish(l21, a21, w2, x1, end8, rowBytes), 8);
    store<f32>(o2, finish(l02, a02, w0, x2, end8, rowBytes));
    store<f32>(o2, finish(l12, a12, w1, x2, end8, rowBytes), 4);
    store<f32>(o2, finish(l22, a22, w2, x2, end8, rowBytes), 8);
  }
  for (; t < t1; t++) {
    const xr = x + <usize>t * rowBytes;
    const o0 = out + <usize>t * stride;
    let l0 = f32x4.splat(0), l1 = f32x4.splat(0), l2 = f32x4.splat(0);
    let h0 = f32x4.splat(0), h1 = f32x4.splat(0), h2 = f32x4.splat(0);
    for (let o: usize = 0; o < end8; o += 32) {
      let v = v128.load(xr + o);
      l0 = fmaF32x4(l0, v128.load(w0 + o), v);
      l1 = fmaF32x4(l1, v128.load(w1 + o), v);
      l2 = fmaF32x4(l2, v128.load(w2 + o), v);
      v = v128.load(xr + o, 16);
      h0 = fmaF32x4(h0, v128.load(w0 + o, 16), v);
      h1 = fmaF32x4(h1, v128.load(w1 + o, 16), v);
      h2 = fmaF32x4(h2, v128.load(w2 + o, 16), v);
    }
    store<f32>(o0, finish(l0, h0, w0, xr, end8, rowBytes));
    store<f32>(o0, finish(l1, h1, w1, xr, end8, rowBytes), 4);
    store<f32>(o0, finish(l2, h2, w2, xr, end8, rowBytes), 8);
  }
  return sink;
}
