/**
 * lfm2's short convolution on the WASM backend: the SIMD kernel (wasm/assembly/short-conv.ts) when every operand is
 * in WASM memory, else the plain-TS rows (short-conv.ts) for a build without it or a state outside memory.
 */

import { type ShortConvArgs, shortConvRows } from '../short-conv.js';
import type { KernelExports } from './kernel-exports.js';

/** Runs `a` (its arrays views of WASM memory, indices in f32) with the kernel of `k` when it can. */
export function wasmShortConv(k: KernelExports, a: ShortConvArgs): void {
  const native = k.short_conv;
  const mem = a.out.buffer;
  if (native && a.state.buffer === mem && a.bcx.buffer === mem && a.kernel.buffer === mem) {
    if (a.fresh) a.state.fill(0);
    // Byte addresses (array offset + 4 · index); ≥ 2³¹ wraps to the same bits (the kernel reads u32).
    const bcx = a.bcx.byteOffset + 4 * a.bcxAt;
    const kernel = a.kernel.byteOffset + 4 * a.kernelAt;
    const out = a.out.byteOffset + 4 * a.outAt;
    native(a.state.byteOffset, bcx, a.bcxStride, kernel, out, a.outStride, a.n, a.channels, a.taps);
    return;
  }
  shortConvRows(a);
}
