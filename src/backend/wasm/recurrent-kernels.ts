/**
 * The WASM backend's recurrent scans (wasm/assembly/delta-net-scan.ts, mamba2-scan.ts) behind the host ops'
 * `RecurrentKernels`: the recurrent state lives in the kernels' memory, every operand is passed as a byte address
 * (a view's byteOffset + 4 · its index).
 */

import type { F32Ref, RecurrentKernels } from '../recurrent-scan.js';
import type { KernelExports } from './kernel-exports.js';
import type { WasmHeap } from './wasm-heap.js';

/** Byte address of a view into the heap. */
const at = ([a, i]: F32Ref): number => a.byteOffset + 4 * i;

/** The kernels of `k` over `heap`, or null when this build has none (a benchmark's older baseline build). */
export function wasmRecurrentKernels(heap: WasmHeap, k: KernelExports): RecurrentKernels | null {
  const { delta_net_scan: deltaNet, mamba2_scan: mamba2, conv_silu: conv, l2norm_heads: l2, gated_norm_heads: gn } = k;
  if (!deltaNet || !mamba2 || !conv || !l2 || !gn) return null;
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
      const o = [a.state, a.conv, a.gate, a.beta, a.out].map(at);
      deltaNet(
        o[0],
        o[1],
        a.convStride,
        o[2],
        a.gateStride,
        o[3],
        a.betaStride,
        o[4],
        a.outStride,
        a.n,
        a.headK,
        a.nKHeads,
        a.headV,
        0,
        a.nVHeads,
      );
    },
    mamba2Scan(a) {
      const o = [a.state, a.conv, a.zx, a.a, a.d, a.out].map(at);
      mamba2(
        o[0],
        o[1],
        a.convStride,
        o[2],
        a.zxStride,
        a.dtCol,
        o[3],
        o[4],
        o[5],
        a.outStride,
        a.n,
        a.nHeads,
        a.headDim,
        a.dState,
        a.nGroups,
        0,
        a.nHeads,
      );
    },
  };
}
