/**
 * Causal multi-head attention of a step's query rows over one layer's f32 KV cache, in f32 (the reference backend
 * does the same in f64). GQA (query head h reads KV head h / (nHeads / nKvHeads)), sliding window, and
 * attention-logit soft-capping (gemma2). Softmax subtracts the row maximum before exp.
 *   q, out  f32 [n, nHeads·headDim]          k, v  f32 [contextLength, nKvHeads·headDim]
 *   scores  f32 [nHeads, startPos + n] scratch (one row per head, so threads splitting heads never share one)
 * Row i sits at position startPos + i and sees positions max(0, pos − window + 1) … pos (window 0 = all).
 */
import { expf, tanhf } from './fast-math';
import { fmaF32x4, hsumF32x4 } from './simd-dot';

// @ts-ignore: decorator
@inline function dotF32(a: usize, b: usize, len: i32): f32 {
  let i = 0;
  let sum: f32 = 0;
  if (ASC_FEATURE_SIMD) {
    let acc0 = f32x4.splat(0);
    let acc1 = f32x4.splat(0);
    for (; i + 8 <= len; i += 8) {
      acc0 = fmaF32x4(acc0, v128.load(a + (<usize>i << 2)), v128.load(b + (<usize>i << 2)));
      acc1 = fmaF32x4(acc1, v128.load(a + (<usize>i << 2), 16), v128.load(b + (<usize>i << 2), 16));
    }
    sum = hsumF32x4(f32x4.add(acc0, acc1));
  }
  for (; i < len; i++) sum += load<f32>(a + (<usize>i << 2)) * load<f32>(b + (<usize>i << 2));
  return sum;
}

/** out[0 … len) += p · v[0 … len). */
// @ts-ignore: decorator
@inline function axpyF32(out: usize, v: usize, p: f32, len: i32): void {
  let i = 0;
  if (ASC_FEATURE_SIMD) {
    const ps = f32x4.splat(p);
    for (; i + 4 <= len; i += 4) {
      const o = out + (<usize>i << 2);
      v128.store(o, fmaF32x4(v128.load(o), ps, v128.load(v + (<usize>i << 2))));
    }
  }
  for (; i < len; i++) {
    const o = out + (<usize>i << 2);
    store<f32>(o, load<f32>(o) + p * load<f32>(v + (<usize>i << 2)));
  }
}

/** See the file header. Heads h0 ≤ h < h1 only (so threads can split heads). */
export function attention_f32(
  out: usize, q: usize, k: usize, v: usize, scores: usize,
  n: i32, startPos: i32, nHeads: i32, nKvHeads: i32, headDim: i32,
  window: i32, scale: f32, softcap: f32, h0: i32, h1: i32,
): void {
  const qCols = nHeads * headDim;
  const kvCols = nKvHeads * headDim;
  const group = nHeads / nKvHeads;
  const ctx = startPos + n;
  for (let i = 0; i < n; i++) {
    const pos = startPos + i;
    const first = window > 0 ? max(0, pos - window + 1) : 0;
    for (let h = h0; h < h1; h++) {
      const sc = scores + (<usize>(h * ctx) << 2);
      const qp = q + (<usize>(i * qCols + h * headDim) << 2);
      const kvOff = (h / group) * headDim;
      let m: f32 = -Infinity;
      for (let t = first; t <= pos; t++) {
        let s = dotF32(qp, k + (<usize>(t * kvCols + kvOff) << 2), headDim) * scale;
        if (softcap > 0) s = softcap * tanhf(s / softcap);
        store<f32>(sc + (<usize>t << 2), s);
        m = max(m, s);
      }
      let sum: f32 = 0;
      for (let t = first; t <= pos; t++) {
        const e = expf(load<f32>(sc + (<usize>t << 2)) - m);
        store<f32>(sc + (<usize>t << 2), e);
        sum += e;
      }
      const op = out + (<usize>(i * qCols + h * headDim) << 2);
      memory.fill(op, 0, <usize>headDim << 2);
      const inv: f32 = 1 / sum;
      for (let t = first; t <= pos; t++) {
        axpyF32(op, v + (<usize>(t * kvCols + kvOff) << 2), load<f32>(sc + (<usize>t << 2)) * inv, headDim);
      }
    }
  }
}

/**
 * attention_f32 with its arguments in memory, in the matvec signature so the host's thread pool can split heads
 * like rows: `p` points at i32 {out, q, k, v, scores, n, startPos, nHeads, nKvHeads, headDim, window} then
 * f32 {scale, softcap}; heads h0 ≤ h < h1. The other parameters are unused.
 */
export function attention_heads(p: usize, _x: usize, _out: usize, _k: i32, h0: i32, h1: i32, _n: i32, _s: i32): void {
  attention_f32(
    load<u32>(p), load<u32>(p, 4), load<u32>(p, 8), load<u32>(p, 12), load<u32>(p, 16),
    load<i32>(p, 20), load<i32>(p, 24), load<i32>(p, 28), load<i32>(p, 32), load<i32>(p, 36), load<i32>(p, 40),
    load<f32>(p, 44), load<f32>(p, 48), h0, h1,
  );
}
