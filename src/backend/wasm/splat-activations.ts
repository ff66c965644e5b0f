/**
 * Prefill kernels that take the Q8 activation rows laid out once per call the way their tile's inner loop reads them
 * (wasm/assembly/splat-driver.ts, gemv-q4-0-tiles.ts: each 4-byte chunk of a block repeated across the 16 lanes, so
 * the tile loads it instead of shuffling it for every row group). Keyed by the 4-row kernel they stand in for at
 * n ≥ minTokens; the outputs are bit-identical to that kernel's.
 */

import type { GemvName, KernelExports } from './kernel-exports.js';
import type { HeapRegion, WasmHeap } from './wasm-heap.js';

/** A splatted-activation kernel: the export to run and the fewest tokens it is used for. */
interface SplatKernel {
  readonly kernel: GemvName;
  readonly minTokens: number;
}

/** By 4-row kernel (kernel-exports.ts FUSED_KERNELS `rows4`). Below 8 tokens the plain kernel's tiles are as fast. */
const SPLAT_KERNELS: ReadonlyMap<GemvName, SplatKernel> = new Map([
  ['gemv_q4_0_r4', { kernel: 'gemv_q4_0_r4x', minTokens: 8 }],
]);

/** Bytes of n tokens' splatted rows of k elements: 8-token groups of (k/32) blocks × 8 records of 144 bytes. */
export function splatBytes(n: number, k: number): number {
  return Math.ceil(n / 8) * (k / 32) * 8 * 144;
}

/** The splatted activations of one WASM backend: its own heap region, re-laid per call (cheap next to the matmul). */
export class SplatActivations {
  private region: HeapRegion = { byteOffset: 0, byteLength: 0 };

  /** `heap`: the backend's, read at each call (the backend sets it after creating this). */
  constructor(private readonly heap: () => WasmHeap) {}

  /**
   * The kernel and x to run `rows4` of `kernels` over n tokens' Q8 rows at `q8` (k elements each): its splatted twin
   * and the rows splatted into this region where one serves (and the build has both), else `rows4` and `q8` unchanged.
   */
  pick(kernels: KernelExports, rows4: GemvName, q8: number, n: number, k: number): [GemvName, number] {
    const s = SPLAT_KERNELS.get(rows4);
    const splat = kernels.splat_q8_x4;
    if (!s || n < s.minTokens || !splat || typeof kernels[s.kernel] !== 'function') return [rows4, q8];
    const bytes = splatBytes(n, k);
    if (bytes > this.region.byteLength)
      this.region = this.heap().alloc(Math.max(bytes, 2 * this.region.byteLength), 'splatted Q8 activations');
    splat(q8, n, k, this.region.byteOffset);
    return [s.kernel, this.region.byteOffset];
  }
}
