/**
 * The selective scan of a Mamba-2 layer over a step's tokens, head by head (the [headDim, dState] state of a head
 * stays in cache while every token runs through it; per-token numerics as ggml's ssm_scan). Per token t, head h of
 * group g = h / (nHeads / nGroups), with dt = zx[t, dtCol + h] (after bias and softplus) and dA = e^{dt·A[h]}:
 *   S_i = S_i·dA + B·(x_i·dt);  y_i = S_i·C + D[h]·x_i;  out[t, i] = y_i · SiLU(z[t, i])   (i over the head's channels)
 *   state  f32 [nHeads, headDim, dState], updated in place
 *   conv   f32 [n, convStride]: x [nHeads·headDim] | B [nGroups·dState] | C [nGroups·dState]
 *   zx     f32 [n, zxStride]: z at column 0, dt at column dtCol
 *   a, d   f32 [nHeads];  out f32 [n, outStride]
 * Heads h0 ≤ h < h1 (a thread's share).
 */
import { expf } from './fast-math';

function mamba2_scan(
  state: usize,
  conv: usize,
  convStride: i32,
  zx: usize,
  zxStride: i32,
  dtCol: i32,
  a: usize,
  d: usize,
  out: usize,
  outStride: i32,
  n: i32,
  nHeads: i32,
  headDim: i32,
  dState: i32,
  nGroups: i32,
  h0: i32,
  h1: i32,
): void {
  const inner = nHeads * headDim;
  const headsPerGroup = nHeads / nGroups;
  const rowBytes = <usize>dState << 2;
  for (let h = h0; h < h1; h++) {
    const g = h / headsPerGroup;
    const bAt = <usize>(inner + g * dState) << 2;
    const cAt = <usize>(inner + (nGroups + g) * dState) << 2;
    const A = load<f32>(a + (<usize>h << 2));
    const D = load<f32>(d + (<usize>h << 2));
    for (let t = 0; t < n; t++) {
      const row = conv + ((<usize>t * <usize>convStride) << 2);
      const zRow = zx + ((<usize>t * <usize>zxStride) << 2);
      const o = out + ((<usize>t * <usize>outStride) << 2);
      const dt = load<f32>(zRow + (<usize>(dtCol + h) << 2));
      const dA = expf(dt * A);
      for (let i = 0; i < headDim; i++) {
        const ii = <usize>(h * headDim + i) << 2;
        const xv = load<f32>(row + ii);
        const sum = scanRow(state + (ii >> 2) * rowBytes, row + bAt, row + cAt, dA, xv * dt, dState);
        const y = sum + xv * D;
        const z = load<f32>(zRow + ii);
        store<f32>(o + ii, (z / (1 + expf(min<f32>(-z, 88.7)))) * y);
      }
    }
  }
}

/** s = s·dA + B·xdt over len values; returns s·C (after the update). */
// @ts-ignore: decorator
@inline function scanRow(s: usize, B: usize, C: usize, dA: f32, xdt: f32, len: i32): f32 {
  let j = 0;
  let sum: f32 = 0;
  if (ASC_FEATURE_SIMD) {
    const av = f32x4.splat(dA);
    const xv = f32x4.splat(xdt);
    let a0 = f32x4.splat(0);
    let a1 = f32x4.splat(0);
    for (; j + 8 <= len; j += 8) {
      const off = <usize>j << 2;
      const s0 = f32x4.add(f32x4.mul(v128.load(s + off), av), f32x4.mul(v128.load(B + off), xv));
      const s1 = f32x4.add(f32x4.mul(v128.load(s + off + 16), av), f32x4.mul(v128.load(B + off + 16), xv));
      v128.store(s + off, s0);
      v128.store(s + off + 16, s1);
      a0 = f32x4.add(a0, f32x4.mul(s0, v128.load(C + off)));
      a1 = f32x4.add(a1, f32x4.mul(s1, v128.load(C + off + 16)));
    }
    const acc = f32x4.add(a0, a1);
    sum =
      f32x4.extract_lane(acc, 0) + f32x4.extract_lane(acc, 1) + f32x4.extract_lane(acc, 2) + f32x4.extract_lane(acc, 3);
  }
  for (; j < len; j++) {
    const off = <usize>j << 2;
    const v = load<f32>(s + off) * dA + load<f32>(B + off) * xdt;
    store<f32>(s + off, v);
    sum += v * load<f32>(C + off);
  }
  return sum;
}

/**
 * mamba2_scan with its parameters in memory at `p` (15 i32: state, conv, convStride, zx, zxStride, dtCol, a, d, out,
 * outStride, n, nHeads, headDim, dState, nGroups), heads h0 … h1−1: the matvec signature, so the thread pool splits
 * heads across threads.
 */
export function mamba2_heads(p: usize, _x: usize, _out: usize, _k: i32, h0: i32, h1: i32, _n: i32, _s: i32): void {
  mamba2_scan(
    <usize>load<u32>(p),
    <usize>load<u32>(p + 4),
    load<i32>(p + 8),
    <usize>load<u32>(p + 12),
    load<i32>(p + 16),
    load<i32>(p + 20),
    <usize>load<u32>(p + 24),
    <usize>load<u32>(p + 28),
    <usize>load<u32>(p + 32),
    load<i32>(p + 36),
    load<i32>(p + 40),
    load<i32>(p + 44),
    load<i32>(p + 48),
    load<i32>(p + 52),
    load<i32>(p + 56),
    h0,
    h1,
  );
}
