/**
 * The row ops between matrix products on the WASM kernels, bit-identical to the host loops they replace, which serve
 * builds older than the kernels (`false` below): the encoder's (bert's LayerNorm, ggml's f16-tabulated GELU;
 * wasm/assembly/encoder-rows.ts, host-encoder-ops.ts) and every model's RMSNorm and residual add
 * (wasm/assembly/row-ops.ts, row-ops.ts).
 */

import { geluF16Table } from '../host-encoder-ops.js';
import type { KernelExports } from './kernel-exports.js';
import type { WasmHeap } from './wasm-heap.js';

/** A row [n, cols] of f32 in the heap: its byte offset and row width. */
interface Rows {
  readonly byteOffset: number;
  readonly cols: number;
}

/** The two kernels and the GELU table they read (placed in the heap on first use). */
export class WasmEncoderRows {
  private table = -1; // byte offset of f32 [65536]

  constructor(
    private readonly heap: WasmHeap,
    private readonly k: KernelExports,
  ) {}

  /** out = LayerNorm(x) over n rows; w, b byte addresses of f32 [x.cols] or 0. False when the build lacks it. */
  layerNorm(out: Rows, x: Rows, w: number, b: number, eps: number, n: number): boolean {
    if (!this.k.layer_norm_rows) return false;
    this.k.layer_norm_rows(out.byteOffset, out.cols, x.byteOffset, x.cols, w, b, eps, n);
    return true;
  }

  /**
   * RMSNorm of `groups` groups of g values of x into out (row-ops.ts `rmsNormRows`, bit for bit); `w` the f32 index
   * of the weight [g] or −1 for none. False when the build lacks the kernel.
   */
  rmsNorm(out: Rows, x: Rows, w: number, g: number, groups: number, eps: number): boolean {
    if (!this.k.rms_norm_rows) return false;
    this.k.rms_norm_rows(out.byteOffset, x.byteOffset, w < 0 ? 0 : w * 4, g, groups, eps);
    return true;
  }

  /** out = a + b over `len` values (from each one's start). False when the build lacks the kernel. */
  add(out: Rows, a: Rows, b: Rows, len: number): boolean {
    if (!this.k.add_rows) return false;
    this.k.add_rows(out.byteOffset, a.byteOffset, b.byteOffset, len);
    return true;
  }

  /** GELU of n rows of x in place. False when the build lacks it. */
  gelu(x: Rows, n: number): boolean {
    if (!this.k.gelu_f16_rows) return false;
    if (this.table < 0) {
      this.table = this.heap.alloc(65536 * 4, 'GELU f16 table').byteOffset;
      this.heap.f32.set(geluF16Table(), this.table >>> 2);
    }
    this.k.gelu_f16_rows(x.byteOffset, n * x.cols, this.table);
    return true;
  }
}
