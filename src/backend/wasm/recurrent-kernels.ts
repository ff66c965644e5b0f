/**
 * The WASM backend's recurrent kernels (wasm/assembly/delta-net-scan.ts, mamba2-scan.ts, recurrent-conv.ts) behind
 * the host ops' `RecurrentKernels`: the recurrent state lives in the kernels' memory, every operand is passed as a
 * byte address (a view's byteOffset + 4 · its index). A scan's parameters go to a small block in memory and its heads
 * are split across the thread pool when the step is long enough to pay for waking the helpers.
 */

import type { F32Ref, RecurrentKernels } from '../recurrent-scan.js';
import type { GemvKernel, GemvName, KernelExports } from './kernel-exports.js';
import type { ThreadPool } from './thread-pool.js';
import type { WasmHeap } from './wasm-heap.js';

/** Byte address of a view into the heap. */
const at = ([a, i]: F32Ref): number => a.byteOffset + 4 * i;

/**
 * Below this many multiply-adds (two per state value and token) a scan stays on the calling thread, as a matmul does
 * (wasm-ops.ts MIN_PARALLEL_WORK): waking the helpers costs tens of µs.
 */
const MIN_PARALLEL_WORK = 1 << 18;

/** The kernels of `k` over `heap`, or null when this build has none (a benchmark's older baseline build). */
export function wasmRecurrentKernels(
  heap: WasmHeap,
  k: KernelExports,
  pool: ThreadPool | null,
): RecurrentKernels | null {
  const {
    delta_net_heads: deltaNet,
    mamba2_heads: mamba2,
    conv_silu: conv,
    l2norm_heads: l2,
    gated_norm_heads: gn,
  } = k;
  if (!deltaNet || !mamba2 || !conv || !l2 || !gn) return null;
  const params = heap.alloc(16 * 4, 'recurrent scan parameters').byteOffset; // [16] i32
  /** Writes the parameter block and runs `fn` over heads 0 … heads − 1, split across threads for big steps. */
  const scan = (name: GemvName, fn: GemvKernel, values: readonly number[], heads: number, perHead: number): void => {
    heap.i32.set(values, params >>> 2); // byte addresses ≥ 2³¹ wrap to the same bits (the kernel reads u32)
    // perHead: a head's state values × tokens, two multiply-adds each.
    if (pool && heads >= 2 && 2 * heads * perHead >= MIN_PARALLEL_WORK)
      pool.dispatch(name, fn, params, 0, 0, 0, 0, 0, heads, 1);
    else fn(params, 0, 0, 0, 0, heads, 0, 0);
  };
  return {
    convSilu(a) {
      const [s, x, w, o] = [a.state, a.x, a.kernel, a.out].map(at);
      conv(s, x, a.xStride, w, a.bias ? at(a.bias) : 0, o, a.outStride, a.n, a.channels, a.taps);
    },
    l2NormHeads(x, stride, n, nHeads, headDim, eps) {
      l2(at(x), stride, n, nHeads, headDim, eps);
    },
    gatedNormHeads(out, outStride, z, zStride, norm, n, nHeads, headV, eps) {
      gn(at(out), outStride, at(z), zStride, at(norm), n, nHeads, headV, eps);
    },
    stateArray(size, what) {
      if (size === 0) return () => new Float32Array(0);
      const { byteOffset } = heap.alloc(size * 4, what); // fresh memory: zero
      return () => new Float32Array(heap.f32.buffer, byteOffset, size); // current after growth
    },
    deltaNetScan(a) {
      const [state, conv, gate, beta, out] = [a.state, a.conv, a.gate, a.beta, a.out].map(at);
      const strides = [a.convStride, gate, a.gateStride, beta, a.betaStride, out, a.outStride];
      const values = [state, conv, ...strides, a.n, a.headK, a.nKHeads, a.headV];
      scan('delta_net_heads', deltaNet, values, a.nVHeads, a.n * a.headV * a.headK);
    },
    mamba2Scan(a) {
      const [state, conv, zx, aw, d, out] = [a.state, a.conv, a.zx, a.a, a.d, a.out].map(at);
      const dims = [a.n, a.nHeads, a.headDim, a.dState, a.nGroups];
      const values = [state, conv, a.convStride, zx, a.zxStride, a.dtCol, aw, d, out, a.outStride, ...dims];
      scan('mamba2_heads', mamba2, values, a.nHeads, a.n * a.headDim * a.dState);
    },
  };
}
