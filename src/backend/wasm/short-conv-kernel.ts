/**
 * lfm2's short convolution on the WASM backend: the SIMD kernel (wasm/assembly/short-conv.ts) over the state the
 * host placed in WASM memory, or the plain-TS rows (short-conv.ts) for a build without it or a state outside memory.
 */

import { shortConvRows } from '../short-conv.js';
import type { KernelExports } from './kernel-exports.js';

/**
 * Where one `Ops.shortConv` reads and writes: byte addresses into WASM memory, strides in f32 columns. One record per
 * backend, refilled per call (the decode loop allocates nothing per layer).
 */
export interface ShortConvCall {
  out: number; // [n, outStride] f32, C columns written
  outStride: number;
  bcx: number; // [n, bcxStride] f32 B | C | x
  bcxStride: number;
  kernel: number; // [C, taps] f32
  n: number;
  channels: number;
  taps: number;
  /** The sequence starts here: the old state reads as zeros. */
  fresh: boolean;
}

/** A call record with placeholder operands, for a backend to refill per call. */
export function emptyShortConvCall(): ShortConvCall {
  return { out: 0, outStride: 0, bcx: 0, bcxStride: 0, kernel: 0, n: 0, channels: 0, taps: 0, fresh: false };
}

/** Runs `a` over `state` ([taps − 1, C] f32, this layer's in this slot, updated in place). */
export function wasmShortConv(k: KernelExports, f32: Float32Array, state: Float32Array, a: ShortConvCall): void {
  const native = k.short_conv;
  if (native && state.buffer === f32.buffer) {
    if (a.fresh) state.fill(0);
    native(state.byteOffset, a.bcx, a.bcxStride, a.kernel, a.out, a.outStride, a.n, a.channels, a.taps);
    return;
  }
  const [outAt, bcxAt, kernelAt] = [a.out >>> 2, a.bcx >>> 2, a.kernel >>> 2];
  shortConvRows({ ...a, out: f32, outAt, bcx: f32, bcxAt, state, kernel: f32, kernelAt });
}
