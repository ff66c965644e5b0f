/**
 * The gated delta rule of qwen35's DeltaNet layers over a step's tokens, head by head (as llama.cpp's CPU
 * `ggml_gated_delta_net`: one head's [headV, headK] state stays in cache while every token runs through it). Per
 * token t and value head h (key head h mod nKHeads), with g = e^{gate[t, h]} and β = beta[t, h]:
 *   S = S·g;  δ_j = (v_j − S_j·k)·β;  S_j += k·δ_j;  out[t, h·headV + j] = (S_j·q) / √headK
 * (S_j: row j of the head's state). q, k are L2-normalised by the host, which also applies the gated norm after.
 *   state  f32 [nVHeads, headV, headK], updated in place
 *   conv   f32 [n, convStride]: q [nKHeads·headK] | k [nKHeads·headK] | v [nVHeads·headV]
 *   gate   f32 [n, gateStride] log decay per value head; beta f32 [n, betaStride] σ(β) per value head
 *   out    f32 [n, outStride]
 * Heads h0 ≤ h < h1 (a thread's share).
 */
import { expf } from './fast-math';

function delta_net_scan(
  state: usize,
  conv: usize,
  convStride: i32,
  gate: usize,
  gateStride: i32,
  beta: usize,
  betaStride: i32,
  out: usize,
  outStride: i32,
  n: i32,
  headK: i32,
  nKHeads: i32,
  headV: i32,
  h0: i32,
  h1: i32,
): void {
  const scale: f32 = 1 / Mathf.sqrt(<f32>headK);
  const rowBytes = <usize>headK << 2;
  const vAt = <usize>(2 * nKHeads * headK) << 2;
  for (let h = h0; h < h1; h++) {
    const qAt = <usize>((h % nKHeads) * headK) << 2;
    const kAt = (<usize>(nKHeads * headK) << 2) + qAt;
    const S = state + <usize>h * <usize>headV * rowBytes;
    for (let t = 0; t < n; t++) {
      const row = conv + ((<usize>t * <usize>convStride) << 2);
      const q = row + qAt;
      const k = row + kAt;
      const v = row + vAt + (<usize>(h * headV) << 2);
      const g = expf(load<f32>(gate + ((<usize>t * <usize>gateStride + <usize>h) << 2)));
      const b = load<f32>(beta + ((<usize>t * <usize>betaStride + <usize>h) << 2));
      const o = out + ((<usize>t * <usize>outStride + <usize>(h * headV)) << 2);
      for (let j = 0; j < headV; j++) {
        const r = S + <usize>j * rowBytes;
        const delta = (load<f32>(v + (<usize>j << 2)) - decayDot(r, k, g, headK)) * b;
        store<f32>(o + (<usize>j << 2), addDot(r, k, q, delta, headK) * scale);
      }
    }
  }
}

/** r = r·g over len values; returns r·k (after the decay). */
// @ts-ignore: decorator
@inline function decayDot(r: usize, k: usize, g: f32, len: i32): f32 {
  let i = 0;
  let sum: f32 = 0;
  if (ASC_FEATURE_SIMD) {
    const gv = f32x4.splat(g);
    let a0 = f32x4.splat(0);
    let a1 = f32x4.splat(0);
    for (; i + 8 <= len; i += 8) {
      const off = <usize>i << 2;
      const s0 = f32x4.mul(v128.load(r + off), gv);
      const s1 = f32x4.mul(v128.load(r + off + 16), gv);
      v128.store(r + off, s0);
      v128.store(r + off + 16, s1);
      a0 = f32x4.add(a0, f32x4.mul(s0, v128.load(k + off)));
      a1 = f32x4.add(a1, f32x4.mul(s1, v128.load(k + off + 16)));
    }
    const a = f32x4.add(a0, a1);
    sum = f32x4.extract_lane(a, 0) + f32x4.extract_lane(a, 1) + f32x4.extract_lane(a, 2) + f32x4.extract_lane(a, 3);
  }
  for (; i < len; i++) {
    const off = <usize>i << 2;
    const s = load<f32>(r + off) * g;
    store<f32>(r + off, s);
    sum += s * load<f32>(k + off);
  }
  return sum;
}

/** r += k·delta over len values; returns r·q (after the update). */
// @ts-ignore: decorator
@inline function addDot(r: usize, k: usize, q: usize, delta: f32, len: i32): f32 {
  let i = 0;
  let sum: f32 = 0;
  if (ASC_FEATURE_SIMD) {
    const dv = f32x4.splat(delta);
    let a0 = f32x4.splat(0);
    let a1 = f32x4.splat(0);
    for (; i + 8 <= len; i += 8) {
      const off = <usize>i << 2;
      const s0 = f32x4.add(v128.load(r + off), f32x4.mul(v128.load(k + off), dv));
      const s1 = f32x4.add(v128.load(r + off + 16), f32x4.mul(v128.load(k + off + 16), dv));
      v128.store(r + off, s0);
      v128.store(r + off + 16, s1);
      a0 = f32x4.add(a0, f32x4.mul(s0, v128.load(q + off)));
      a1 = f32x4.add(a1, f32x4.mul(s1, v128.load(q + off + 16)));
    }
    const a = f32x4.add(a0, a1);
    sum = f32x4.extract_lane(a, 0) + f32x4.extract_lane(a, 1) + f32x4.extract_lane(a, 2) + f32x4.extract_lane(a, 3);
  }
  for (; i < len; i++) {
    const off = <usize>i << 2;
    const s = load<f32>(r + off) + load<f32>(k + off) * delta;
    store<f32>(r + off, s);
    sum += s * load<f32>(q + off);
  }
  return sum;
}

/**
 * delta_net_scan with its parameters in memory at `p` (13 i32: state, conv, convStride, gate, gateStride, beta,
 * betaStride, out, outStride, n, headK, nKHeads, headV), heads h0 … h1−1: the matvec signature, so the thread pool
 * splits heads across threads.
 */
export function delta_net_heads(p: usize, _x: usize, _out: usize, _k: i32, h0: i32, h1: i32, _n: i32, _s: i32): void {
  delta_net_scan(
    <usize>load<u32>(p),
    <usize>load<u32>(p + 4),
    load<i32>(p + 8),
    <usize>load<u32>(p + 12),
    load<i32>(p + 16),
    <usize>load<u32>(p + 20),
    load<i32>(p + 24),
    <usize>load<u32>(p + 28),
    load<i32>(p + 32),
    load<i32>(p + 36),
    load<i32>(p + 40),
    load<i32>(p + 44),
    load<i32>(p + 48),
    h0,
    h1,
  );
}
