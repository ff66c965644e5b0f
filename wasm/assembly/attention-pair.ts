/**
 * Non-causal attention of two query rows of one head over every key (the vision encoder's patches; llama.cpp's
 * non-causal image chunks): each K and V row is loaded once for both rows instead of once per row. The same sums as
 * attention.ts's `attention_f32` for each row (per-key dot order, exp, per-column weighted sums in key order), so the
 * results are bit-identical to two calls of it. f32 KV, no window, soft-cap or sinks, headDim a multiple of 4.
 * Parameters in memory at `p` as attention_heads takes them (out, q of the first row; rows of nHeads·headDim; startPos
 * = the last key); the first row's scores go to head h's scratch row, the second's to head (h + 1) % nHeads's (free:
 * the host runs this on one thread, head by head).
 */
import { attention_f32, dotF32, expRows } from './attention';
import { fmaF32x4, hsum4F32 } from './simd-dot';

/** Lane-wise maximum of finite scores (relaxed build: one x64 instruction; strict f32x4.max handles NaN and ±0). */
// @ts-ignore: decorator
@inline function maxFinite(a: v128, b: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return f32x4.relaxed_max(a, b);
  return f32x4.max(a, b);
}

/** Scores of query rows q0, q1 against keys 0 … last (× scale) into s0, s1; returns max of each in the lanes 0, 1. */
// @ts-ignore: decorator
@inline function scorePair(s0: usize, s1: usize, q0: usize, q1: usize, kBase: usize, kStride: usize, last: i32, headDim: i32, scale: f32): v128 {
  const sv = f32x4.splat(scale);
  let m0 = f32x4.splat(-Infinity);
  let m1 = f32x4.splat(-Infinity);
  let t = 0;
  for (; t + 4 <= last + 1; t += 4) {
    const k0 = kBase + <usize>t * kStride;
    const k1 = k0 + kStride;
    const k2 = k1 + kStride;
    const k3 = k2 + kStride;
    let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
    let b0 = f32x4.splat(0), b1 = f32x4.splat(0), b2 = f32x4.splat(0), b3 = f32x4.splat(0);
    for (let i = 0; i < headDim; i += 4) {
      const o = <usize>i << 2;
      const x0 = v128.load(q0 + o);
      const x1 = v128.load(q1 + o);
      let kv = v128.load(k0 + o);
      a0 = fmaF32x4(a0, x0, kv);
      b0 = fmaF32x4(b0, x1, kv);
      kv = v128.load(k1 + o);
      a1 = fmaF32x4(a1, x0, kv);
      b1 = fmaF32x4(b1, x1, kv);
      kv = v128.load(k2 + o);
      a2 = fmaF32x4(a2, x0, kv);
      b2 = fmaF32x4(b2, x1, kv);
      kv = v128.load(k3 + o);
      a3 = fmaF32x4(a3, x0, kv);
      b3 = fmaF32x4(b3, x1, kv);
    }
    const r0 = f32x4.mul(hsum4F32(a0, a1, a2, a3), sv);
    const r1 = f32x4.mul(hsum4F32(b0, b1, b2, b3), sv);
    v128.store(s0 + (<usize>t << 2), r0);
    v128.store(s1 + (<usize>t << 2), r1);
    m0 = maxFinite(m0, r0);
    m1 = maxFinite(m1, r1);
  }
  let x0: f32 = max(max(f32x4.extract_lane(m0, 0), f32x4.extract_lane(m0, 1)), max(f32x4.extract_lane(m0, 2), f32x4.extract_lane(m0, 3)));
  let x1: f32 = max(max(f32x4.extract_lane(m1, 0), f32x4.extract_lane(m1, 1)), max(f32x4.extract_lane(m1, 2), f32x4.extract_lane(m1, 3)));
  for (; t <= last; t++) {
    const kr = kBase + <usize>t * kStride;
    const a = dotF32(q0, kr, headDim) * scale;
    const b = dotF32(q1, kr, headDim) * scale;
    store<f32>(s0 + (<usize>t << 2), a);
    store<f32>(s1 + (<usize>t << 2), b);
    x0 = max(x0, a);
    x1 = max(x1, b);
  }
  return f32x4.replace_lane(f32x4.splat(x0), 1, x1);
}

/** o0, o1 [headDim] = inv0 · Σ_t s0[t] · V row t, inv1 · Σ_t s1[t] · V row t (each column summed in key order). */
// @ts-ignore: decorator
@inline function weightPair(o0: usize, o1: usize, s0: usize, s1: usize, vBase: usize, vStride: usize, last: i32, headDim: i32, inv0: f32, inv1: f32): void {
  const i0 = f32x4.splat(inv0);
  const i1 = f32x4.splat(inv1);
  let c = 0;
  for (; c + 16 <= headDim; c += 16) {
    const vc = vBase + (<usize>c << 2);
    let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
    let b0 = f32x4.splat(0), b1 = f32x4.splat(0), b2 = f32x4.splat(0), b3 = f32x4.splat(0);
    for (let t = 0; t <= last; t++) {
      const p0 = v128.load32_splat(s0 + (<usize>t << 2));
      const p1 = v128.load32_splat(s1 + (<usize>t << 2));
      const vr = vc + <usize>t * vStride;
      let v = v128.load(vr);
      a0 = fmaF32x4(a0, p0, v);
      b0 = fmaF32x4(b0, p1, v);
      v = v128.load(vr, 16);
      a1 = fmaF32x4(a1, p0, v);
      b1 = fmaF32x4(b1, p1, v);
      v = v128.load(vr, 32);
      a2 = fmaF32x4(a2, p0, v);
      b2 = fmaF32x4(b2, p1, v);
      v = v128.load(vr, 48);
      a3 = fmaF32x4(a3, p0, v);
      b3 = fmaF32x4(b3, p1, v);
    }
    const c4 = <usize>c << 2;
    v128.store(o0 + c4, f32x4.mul(a0, i0));
    v128.store(o0 + c4, f32x4.mul(a1, i0), 16);
    v128.store(o0 + c4, f32x4.mul(a2, i0), 32);
    v128.store(o0 + c4, f32x4.mul(a3, i0), 48);
    v128.store(o1 + c4, f32x4.mul(b0, i1));
    v128.store(o1 + c4, f32x4.mul(b1, i1), 16);
    v128.store(o1 + c4, f32x4.mul(b2, i1), 32);
    v128.store(o1 + c4, f32x4.mul(b3, i1), 48);
  }
  for (; c < headDim; c += 4) {
    const vc = vBase + (<usize>c << 2);
    let a0 = f32x4.splat(0);
    let b0 = f32x4.splat(0);
    for (let t = 0; t <= last; t++) {
      const v = v128.load(vc + <usize>t * vStride);
      a0 = fmaF32x4(a0, v128.load32_splat(s0 + (<usize>t << 2)), v);
      b0 = fmaF32x4(b0, v128.load32_splat(s1 + (<usize>t << 2)), v);
    }
    v128.store(o0 + (<usize>c << 2), f32x4.mul(a0, i0));
    v128.store(o1 + (<usize>c << 2), f32x4.mul(b0, i1));
  }
}

/** See the file header: rows 0 and 1 at `p`'s out and q, heads h0 ≤ h < h1 (scalar builds: attention_f32 per row). */
export function attention_pair_heads(p: usize, _x: usize, _out: usize, _k: i32, h0: i32, h1: i32, _n: i32, _s: i32): void {
  const out = <usize>load<u32>(p);
  const q = <usize>load<u32>(p, 4);
  const k = <usize>load<u32>(p, 8);
  const v = <usize>load<u32>(p, 12);
  const scores = <usize>load<u32>(p, 16);
  const last = load<i32>(p, 24);
  const nHeads = load<i32>(p, 28);
  const nKvHeads = load<i32>(p, 32);
  const headDim = load<i32>(p, 36);
  const scale = load<f32>(p, 44);
  const qCols = nHeads * headDim;
  const kvStride = <usize>(nKvHeads * headDim) << 2;
  const group = nHeads / nKvHeads;
  const ctx = last + 1;
  if (!ASC_FEATURE_SIMD) {
    const rowBytes = <usize>qCols << 2;
    attention_f32(out, q, k, v, scores, 1, last, nHeads, nKvHeads, headDim, 0, scale, 0, 0, h0, h1);
    attention_f32(out + rowBytes, q + rowBytes, k, v, scores, 1, last, nHeads, nKvHeads, headDim, 0, scale, 0, 0, h0, h1);
    return;
  }
  for (let h = h0; h < h1; h++) {
    const s0 = scores + (<usize>(h * ctx) << 2);
    const s1 = scores + (<usize>(((h + 1) % nHeads) * ctx) << 2);
    const q0 = q + (<usize>(h * headDim) << 2);
    const q1 = q0 + (<usize>qCols << 2);
    const kvOff = <usize>((h / group) * headDim) << 2;
    const m = scorePair(s0, s1, q0, q1, k + kvOff, kvStride, last, headDim, scale);
    const sum0 = expRows(s0, 0, last, f32x4.extract_lane(m, 0));
    const sum1 = expRows(s1, 0, last, f32x4.extract_lane(m, 1));
    const o0 = out + (<usize>(h * headDim) << 2);
    weightPair(o0, o0 + (<usize>qCols << 2), s0, s1, v + kvOff, kvStride, last, headDim, <f32>1 / sum0, <f32>1 / sum1);
  }
}

/** Largest of s[first … last] (−∞ for an empty range). */
// @ts-ignore: decorator
@inline function maxOf(s: usize, first: i32, last: i32): f32 {
  let m: f32 = -Infinity;
  for (let t = first; t <= last; t++) m = max(m, load<f32>(s + (<usize>t << 2)));
  return m;
}

/** s[from … to] = 0 (keys a row of a windowed pair does not see). */
// @ts-ignore: decorator
@inline function zeroRange(s: usize, from: i32, to: i32): void {
  for (let t = from; t <= to; t++) store<f32>(s + (<usize>t << 2), 0);
}

/**
 * attention_pair_heads for two rows that each see their own range of keys (sliding windows on non-causal rows:
 * EmbeddingGemma's symmetric window): the first row keys f0 … l0 (bytes 68, 72 of the parameter block), the second
 * f1 … l1 (byte 76, and the block's startPos field for l1). Each K and V row of the union is loaded once for both
 * rows; each row's maximum and exponentials are taken over its own keys only (expRows' order from its own first
 * key), and its weights outside its range are zero, so a masked key adds exactly 0 to every column sum. The scores
 * are grouped four keys at a time from the union's first key (the single-row kernel groups from the row's own), so
 * results differ from attention_heads by rounding only.
 */
export function attention_pair_window_heads(p: usize, _x: usize, _out: usize, _k: i32, h0: i32, h1: i32, _n: i32, _s: i32): void {
  const out = <usize>load<u32>(p);
  const q = <usize>load<u32>(p, 4);
  const k = <usize>load<u32>(p, 8);
  const v = <usize>load<u32>(p, 12);
  const scores = <usize>load<u32>(p, 16);
  const l1 = load<i32>(p, 24);
  const nHeads = load<i32>(p, 28);
  const nKvHeads = load<i32>(p, 32);
  const headDim = load<i32>(p, 36);
  const scale = load<f32>(p, 44);
  const f0 = load<i32>(p, 68);
  const l0 = load<i32>(p, 72);
  const f1 = load<i32>(p, 76);
  const qCols = nHeads * headDim;
  const rowBytes = <usize>qCols << 2;
  const kvStride = <usize>(nKvHeads * headDim) << 2;
  const group = nHeads / nKvHeads;
  if (!ASC_FEATURE_SIMD) {
    attention_f32(out, q, k, v, scores, 1, l0, nHeads, nKvHeads, headDim, l0 - f0 + 1, scale, 0, 0, h0, h1);
    attention_f32(out + rowBytes, q + rowBytes, k, v, scores, 1, l1, nHeads, nKvHeads, headDim, l1 - f1 + 1, scale, 0, 0, h0, h1);
    return;
  }
  const fu = min(f0, f1);
  const lu = max(l0, l1);
  const ctx = lu + 1; // scores rows of this length fit the host's [nHeads, startPos + n] scratch (lu < startPos + n)
  const span = lu - fu;
  const from = <usize>fu << 2;
  for (let h = h0; h < h1; h++) {
    const s0 = scores + (<usize>(h * ctx) << 2);
    const s1 = scores + (<usize>(((h + 1) % nHeads) * ctx) << 2);
    const q0 = q + (<usize>(h * headDim) << 2);
    const kvOff = <usize>((h / group) * headDim) << 2;
    scorePair(s0 + from, s1 + from, q0, q0 + rowBytes, k + kvOff + <usize>fu * kvStride, kvStride, span, headDim, scale);
    const sum0 = expRows(s0, f0, l0, maxOf(s0, f0, l0));
    const sum1 = expRows(s1, f1, l1, maxOf(s1, f1, l1));
    zeroRange(s0, fu, f0 - 1);
    zeroRange(s0, l0 + 1, lu);
    zeroRange(s1, fu, f1 - 1);
    zeroRange(s1, l1 + 1, lu);
    const o0 = out + (<usize>(h * headDim) << 2);
    weightPair(o0, o0 + rowBytes, s0 + from, s1 + from, v + kvOff + <usize>fu * kvStride, kvStride, span, headDim, <f32>1 / sum0, <f32>1 / sum1);
  }
}
