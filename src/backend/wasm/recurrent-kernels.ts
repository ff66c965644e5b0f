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
  const words = params >>> 2;
  /** Runs `fn` over heads 0 … heads − 1 (its parameter block written by the caller), split across threads for big steps. */
  const scan = (name: GemvName, fn: GemvKernel, heads: number, perHead: number): void => {
    // perHead: a head's state values × tokens, two multiply-adds each.
    if (pool && heads >= 2 && 2 * heads * perHead >= MIN_PARALLEL_WORK)
      pool.dispatch(name, fn, params, 0, 0, 0, 0, 0, heads, 1);
    else fn(params, 0, 0, 0, 0, heads, 0, 0);
  };
  return {
    convSilu(a) {
      const bias = a.bias ? at(a.bias) : 0;
      conv(at(a.state), at(a.x), a.xStride, at(a.kernel), bias, at(a.out), a.outStride, a.n, a.channels, a.taps);
    },
    l2NormHeads(x, stride, n, nHeads, headDim, eps) {
      l2(at(x), stride, n, nHeads, headDim, eps);
    },
    gatedNormHeads(out, outStride, z, zStride, norm, n, nHeads, headV, eps) {
      gn(at(out), outStride, at(z), zStride, at(norm), n, nHeads, headV, eps);
    },
    stateArray(size, what) {
      if (size === 0) {
        // A layer without state (attention): an array of its own, not a view of the memory. A view would stay on the
        // memory's first buffer, which a later grow detaches, and copying even zero values from it throws.
        const none = new Float32Array(0);
        return () => none;
      }
      const { byteOffset } = heap.alloc(size * 4, what); // fresh memory: zero
      let view = new Float32Array(heap.f32.buffer, byteOffset, size);
      return () => {
        // A new view only after the memory grew (its old buffer is detached), not per call: asked per layer and token.
        if (view.buffer !== heap.f32.buffer) view = new Float32Array(heap.f32.buffer, byteOffset, size);
        return view;
      };
    },
    // Parameter blocks written word by word (no arrays: a scan runs per recurrent layer and token). Byte addresses
    // ≥ 2³¹ wrap to the same bits (the kernels read u32).
    deltaNetScan(a) {
      const p = heap.i32;
      p[words] = at(a.state);
      p[words + 1] = at(a.conv);
      p[words + 2] = a.convStride;
      p[words + 3] = at(a.gate);
      p[words + 4] = a.gateStride;
      p[words + 5] = at(a.beta);
      p[words + 6] = a.betaStride;
      p[words + 7] = at(a.out);
      p[words + 8] = a.outStride;
      p[words + 9] = a.n;
      p[words + 10] = a.headK;
      p[words + 11] = a.nKHeads;
      p[words + 12] = a.headV;
      scan('delta_net_heads', deltaNet, a.nVHeads, a.n * a.headV * a.headK);
    },
    mamba2Scan(a) {
      const p = heap.i32;
      p[words] = at(a.state);
      p[words + 1] = at(a.conv);
      p[words + 2] = a.convStride;
      p[words + 3] = at(a.zx);
      p[words + 4] = a.zxStride;
      p[words + 5] = a.dtCol;
      p[words + 6] = at(a.a);
      p[words + 7] = at(a.d);
      p[words + 8] = at(a.out);
      p[words + 9] = a.outStride;
      p[words + 10] = a.n;
      p[words + 11] = a.nHeads;
      p[words + 12] = a.headDim;
      p[words + 13] = a.dState;
      p[words + 14] = a.nGroups;
      scan('mamba2_heads', mamba2, a.nHeads, a.n * a.headDim * a.dState);
    },
  };
}
