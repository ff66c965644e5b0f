/**
 * Rotary embedding on the WASM kernel (wasm/assembly/rope.ts `rope_rows`), bit-identical to the host loop
 * (row-ops.ts `ropeRotate`), which serves builds older than the kernel. The kernel reads the host's f64 cos/sin tables
 * from the heap: they are copied there when they change (a new step's positions or another parameter set), not per
 * call — q and k of every layer with the same parameters share one copy.
 */

import type { RopeParams } from '../ops.js';
import type { KernelExports } from './kernel-exports.js';
import type { WasmHeap } from './wasm-heap.js';

/** One parameter set's tables as last copied: the step they were asked for and their place in the heap. */
interface Copied {
  startPos: number;
  n: number;
  positions: unknown;
  /** Byte offset of cos f64 [n, half] then sin f64 [n, half]. */
  at: number;
  /** Bytes reserved there. */
  bytes: number;
}

/** See the file header. */
export class WasmRope {
  /**
   * Per parameter set (keyed by its cos array, which `RopeTables` refills in place): a model whose layers alternate
   * two rope bases (sliding-window layers) keeps both copies instead of re-copying at every layer.
   */
  private readonly copies = new Map<Float64Array, Copied>();
  private f64: Float64Array<ArrayBufferLike> = new Float64Array(0); // the heap as f64, re-made only after it grew

  constructor(
    private readonly heap: WasmHeap,
    private readonly k: KernelExports,
  ) {}

  /**
   * Rotates n rows of x (byte offset, rows of `cols` f32) in place with the tables `RopeTables.get` returned for
   * (params, startPos, n, positions). False when the build lacks the kernel.
   */
  rotate(
    x: number,
    cols: number,
    n: number,
    params: RopeParams,
    tables: { cos: Float64Array; sin: Float64Array },
    startPos: number,
    positions: unknown,
  ): boolean {
    if (!this.k.rope_rows) return false;
    const half = params.nRot / 2;
    let c = this.copies.get(tables.cos);
    if (c === undefined) {
      if (this.copies.size >= 16) this.copies.clear(); // as RopeTables bounds its entries
      c = { startPos: -1, n: 0, positions: null, at: -1, bytes: 0 };
      this.copies.set(tables.cos, c);
    }
    if (!(c.startPos === startPos && c.n >= n && c.positions === positions)) {
      const bytes = n * half * 16; // cos [n, half] f64 then sin [n, half] f64
      if (bytes > c.bytes) {
        c.bytes = Math.max(bytes, 2 * c.bytes);
        c.at = this.heap.alloc(c.bytes, 'rope cos/sin tables').byteOffset; // 64-byte aligned
      }
      if (this.f64.buffer !== this.heap.f32.buffer) this.f64 = new Float64Array(this.heap.f32.buffer);
      const at = c.at >>> 3;
      this.f64.set(tables.cos.subarray(0, n * half), at);
      this.f64.set(tables.sin.subarray(0, n * half), at + n * half);
      c.startPos = startPos;
      c.n = n;
      c.positions = positions;
    }
    const sin = c.at + c.n * half * 8;
    this.k.rope_rows(x, cols, n, params.headDim, half, params.kind === 'norm' ? 1 : 0, c.at, sin);
    return true;
  }
}
