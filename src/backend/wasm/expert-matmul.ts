/**
 * The WASM backend's mixture-of-experts steps. `matmulExperts` (ggml `mul_mat_id`) groups the step's (token, slot)
 * rows by selected expert, gathers their activations (Q8 rows for the quantized kernels, f32 otherwise) into one
 * contiguous block, runs the ordinary fused matvec over that expert's row range of the 3-D weight (so decode reads
 * only the selected experts' rows, and prefill reads each selected expert once for all its tokens), then scatters the
 * results to rows token·nUsed + slot. Types without a fused kernel dequantize only the selected expert's rows.
 * Routing and the weighted sums are host loops over the heap (a few hundred values per token).
 */

import { LlmError } from '../../errors.js';
import { getQuantType } from '../../quant/index.js';
import { type RouteRows, routeToken } from '../moe-route.js';
import type { Activation, Weight } from '../ops.js';
import type { MoeRouteParams } from '../moe-step.js';
import { FUSED_KERNELS, q8RowBytes, type GemvName, type KernelExports } from './kernel-exports.js';
import type { Rows4Block } from './rows4-layout.js';
import type { WasmHeap } from './wasm-heap.js';

/** What the expert matmul needs of a WASM weight (`wasm-ops.ts` WasmWeight). */
export interface ExpertWeight {
  readonly name: string;
  readonly type: number;
  readonly rowLength: number;
  readonly nRows: number;
  readonly byteOffset: number;
  readonly rowBytes: number;
  /** Non-zero for the row-pair layout (row-pairs.ts). */
  readonly pairBlockBytes: number;
  /** Set for the 4-row layout (rows4-layout.ts; experts of whole groups only, wasm-weight-stream.ts). */
  readonly rows4: Rows4Block | null;
}

/** What it needs of a WASM activation: [maxRows, cols] f32 at byteOffset. */
export interface ExpertActivation extends Activation {
  readonly byteOffset: number;
}

/** Runs a matvec kernel over rows 0 … rows−1 (on the pool when worth it): `WasmOps.run`. */
type RunRows = (
  name: GemvName,
  w: number,
  x: number,
  out: number,
  k: number,
  rows: number,
  n: number,
  stride: number,
) => void;
/** Q8 rows of x[0 … n) (first k columns), cached while x is unchanged: `WasmOps.quantizeQ8`. */
type QuantizeQ8 = (x: ExpertActivation, n: number, k: number) => number;

/** Bytes of f32 rows dequantized at a time for types without a fused kernel. */
const DEQUANT_CHUNK_BYTES = 1 << 20;

/** The MoE steps of one `WasmOps` (see the file header). */
export class WasmExperts {
  private region = { byteOffset: 0, byteLength: 0 };
  private probs = new Float32Array(0); // [nExperts] router probabilities of one token
  private counts = new Int32Array(0); // [nExperts + 1] rows per expert, then prefix offsets
  private order = new Int32Array(0); // [n·nUsed] row indices t·nUsed + s grouped by expert
  /** Where routeToken reads and writes, refreshed per call (views of the heap; no object per layer per token). */
  private readonly rows: RouteRows = {
    logits: new Float32Array(0),
    logitsAt: 0,
    ids: new Float32Array(0),
    idsAt: 0,
    weights: new Float32Array(0),
    weightsAt: 0,
  };

  constructor(
    private readonly heap: WasmHeap,
    private readonly k: KernelExports,
    private readonly runRows: RunRows,
    private readonly quantizeQ8: QuantizeQ8,
    /** f32 index of a 1-D weight's values in the heap (`WasmOps.vector`). */
    private readonly vector: (w: Weight) => number,
  ) {}

  route(
    ids: ExpertActivation,
    weights: ExpertActivation,
    logits: ExpertActivation,
    n: number,
    p: MoeRouteParams,
  ): void {
    if (this.probs.length < logits.cols) this.probs = new Float32Array(logits.cols);
    const f32 = this.heap.f32;
    const biasAt = p.selectionBias ? this.vector(p.selectionBias) : 0; // f32 index of [nExperts]
    const scaleAt = p.expertScale ? this.vector(p.expertScale) : 0; // f32 index of [nExperts]
    const rows = this.rows;
    rows.logits = f32;
    rows.ids = f32;
    rows.weights = f32;
    for (let t = 0; t < n; t++) {
      rows.logitsAt = (logits.byteOffset >>> 2) + t * logits.cols;
      rows.idsAt = (ids.byteOffset >>> 2) + t * ids.cols;
      rows.weightsAt = (weights.byteOffset >>> 2) + t * weights.cols;
      const bias = p.selectionBias ? f32 : null;
      routeToken(rows, logits.cols, ids.cols, p, this.probs, bias, biasAt, p.expertScale ? f32 : null, scaleAt);
    }
  }

  /** out rows t·nUsed + s = x row (xPerSlot ? t·nUsed + s : t) · W[ids[t, s]]ᵀ. */
  matmul(
    out: ExpertActivation,
    x: ExpertActivation,
    w: ExpertWeight,
    nExperts: number,
    ids: ExpertActivation,
    n: number,
    xPerSlot: boolean,
  ): void {
    const nUsed = ids.cols;
    const rows = w.nRows / nExperts; // rows of one expert
    const kk = w.rowLength;
    if (x.cols !== kk || out.cols !== rows || n * nUsed > out.maxRows || !Number.isInteger(rows)) {
      throw new LlmError(
        'invalid-request',
        `matmulExperts ${w.name}: x [${n}, ${x.cols}] · ${nExperts} experts of [${rows}, ${kk}] does not fit out ${out.label} [${out.maxRows}, ${out.cols}]`,
      );
    }
    const total = n * nUsed;
    this.groupByExpert(ids, n, nExperts);
    const fused = FUSED_KERNELS.get(w.type);
    const q8 = fused?.isQ8 === true;
    // Weights in 4-row groups: each expert's rows are whole groups, a matrix of their own for the stored kernel.
    const name = fused ? (w.rows4 && fused.rows4 ? fused.rows4 : fused.name) : null;
    const xRows = xPerSlot ? total : n;
    const xBase = q8 ? this.quantizeQ8(x, xRows, kk) : x.byteOffset; // Q8 rows, or x's own f32 rows (cols = k)
    const xRowBytes = q8 ? q8RowBytes(kk) : x.cols * 4;
    const gatherBytes = align64(n * xRowBytes);
    const outBytes = align64(n * rows * 4);
    const chunkRows = fused ? 0 : Math.max(1, Math.min(rows, Math.floor(DEQUANT_CHUNK_BYTES / (kk * 4))));
    const base = this.scratch(gatherBytes + outBytes + chunkRows * kk * 4);
    const gx = base; // [cnt, xRowBytes] gathered activations
    const gout = base + gatherBytes; // [cnt, rows] f32 results
    const deq = gout + outBytes; // [chunkRows, k] f32 dequantized expert rows
    const u8 = this.heap.u8;
    const f32 = this.heap.f32;
    for (let e = 0; e < nExperts; e++) {
      const from = this.counts[e];
      const cnt = this.counts[e + 1] - from;
      if (cnt === 0) continue;
      if (cnt === 1 && name) {
        // One row for this expert (every expert of a decode step): the kernel reads its activation row in place and
        // writes its output row in place, no gather or scatter copy.
        const row = this.order[from];
        const src = xBase + (xPerSlot ? row : Math.floor(row / nUsed)) * xRowBytes;
        this.expertRows(name, w, e * rows, rows, src, 1, out.byteOffset + row * out.cols * 4);
        continue;
      }
      for (let j = 0; j < cnt; j++) {
        const row = this.order[from + j];
        const src = xBase + (xPerSlot ? row : Math.floor(row / nUsed)) * xRowBytes;
        u8.copyWithin(gx + j * xRowBytes, src, src + xRowBytes);
      }
      if (name) this.expertRows(name, w, e * rows, rows, gx, cnt, gout);
      else this.dequantRows(w, e * rows, rows, gx, cnt, gout, deq, chunkRows);
      for (let j = 0; j < cnt; j++) {
        const s = (gout >>> 2) + j * rows;
        f32.copyWithin((out.byteOffset >>> 2) + this.order[from + j] * out.cols, s, s + rows);
      }
    }
  }

  /** out[t] = Σ_s weights[t, s] · y[t·nUsed + s]. */
  combine(out: ExpertActivation, y: ExpertActivation, weights: ExpertActivation, n: number): void {
    const f32 = this.heap.f32;
    const nUsed = weights.cols;
    const cols = y.cols;
    if (this.k.moe_combine) {
      // The SIMD kernel (moe-combine.ts): the same products and sums in f32, no JS loop per value.
      this.k.moe_combine(out.byteOffset, y.byteOffset, weights.byteOffset, cols, nUsed, n, out.cols);
      return;
    }
    for (let t = 0; t < n; t++) {
      const o = (out.byteOffset >>> 2) + t * out.cols;
      const wt = (weights.byteOffset >>> 2) + t * nUsed;
      const y0 = (y.byteOffset >>> 2) + t * nUsed * cols;
      const g0 = f32[wt];
      for (let j = 0; j < cols; j++) f32[o + j] = g0 * f32[y0 + j]; // the first slot writes, the others add
      for (let s = 1; s < nUsed; s++) {
        const g = f32[wt + s];
        const yr = y0 + s * cols;
        for (let j = 0; j < cols; j++) f32[o + j] += g * f32[yr + j];
      }
    }
  }

  /** out[t] += sigmoid(gate[t, 0]) · y[t]. */
  sigmoidGatedAdd(out: ExpertActivation, y: ExpertActivation, gate: ExpertActivation, n: number): void {
    const f32 = this.heap.f32;
    for (let t = 0; t < n; t++) {
      const g = 1 / (1 + Math.exp(-f32[(gate.byteOffset >>> 2) + t * gate.cols]));
      const o = (out.byteOffset >>> 2) + t * out.cols;
      const yr = (y.byteOffset >>> 2) + t * y.cols;
      for (let j = 0; j < out.cols; j++) f32[o + j] += g * f32[yr + j];
    }
  }

  /** Counting sort of the rows t·nUsed + s by expert: counts[e] … counts[e+1] index `order`. */
  private groupByExpert(ids: ExpertActivation, n: number, nExperts: number): void {
    const total = n * ids.cols;
    if (this.counts.length < nExperts + 1) this.counts = new Int32Array(nExperts + 1);
    if (this.order.length < total) this.order = new Int32Array(total);
    const counts = this.counts;
    const f32 = this.heap.f32;
    const at = ids.byteOffset >>> 2;
    counts.fill(0, 0, nExperts + 1);
    for (let r = 0; r < total; r++) counts[f32[at + r] + 1]++;
    for (let e = 0; e < nExperts; e++) counts[e + 1] += counts[e];
    for (let r = 0; r < total; r++) {
      const e = f32[at + r];
      this.order[counts[e]++] = r;
    }
    for (let e = nExperts; e > 0; e--) counts[e] = counts[e - 1]; // back to start offsets
    counts[0] = 0;
  }

  /** A fused kernel over rows r0 … r0+rows−1 of w for `cnt` gathered activation rows, into gout [cnt, rows]. */
  private expertRows(
    name: GemvName,
    w: ExpertWeight,
    r0: number,
    rows: number,
    x: number,
    cnt: number,
    gout: number,
  ): void {
    const kk = w.rowLength;
    if (w.pairBlockBytes === 0 || (r0 & 1) === 0) {
      // GGUF rows, 4-row groups (rows a multiple of 4), or row pairs starting at an even row: the expert's rows are a
      // matrix of their own.
      this.runRows(name, w.byteOffset + r0 * w.rowBytes, x, gout, kk, rows, cnt, rows);
    } else {
      // An odd first row (odd rows per expert): address rows 1 … rows of the pair holding r0 − 1, one thread; the
      // kernel writes row r at out + 4r, so out starts one float early (gout is 64-byte aligned within the heap).
      const pairStart = w.byteOffset + (r0 - 1) * w.rowBytes;
      this.k[name](pairStart, x, gout - 4, kk, 1, rows + 1, cnt, rows);
    }
  }

  /** Types without a fused kernel: dequantize the expert's rows chunk-wise, then gemv_f32 (f32 activations). */
  private dequantRows(
    w: ExpertWeight,
    r0: number,
    rows: number,
    x: number,
    cnt: number,
    gout: number,
    deq: number,
    chunkRows: number,
  ): void {
    const kk = w.rowLength;
    const qt = getQuantType(w.type);
    for (let c = 0; c < rows; c += chunkRows) {
      const nr = Math.min(chunkRows, rows - c);
      const src = w.byteOffset + (r0 + c) * w.rowBytes;
      qt.dequantizeRow(
        this.heap.u8.subarray(src, src + nr * w.rowBytes),
        this.heap.f32.subarray(deq >>> 2, (deq >>> 2) + nr * kk),
        nr * kk,
      );
      this.runRows('gemv_f32', deq, x, gout + c * 4, kk, nr, cnt, rows);
    }
  }

  private scratch(bytes: number): number {
    if (bytes > this.region.byteLength) {
      this.region = this.heap.alloc(Math.max(bytes, 2 * this.region.byteLength), 'expert matmul scratch');
    }
    return this.region.byteOffset;
  }
}

function align64(bytes: number): number {
  return Math.ceil(bytes / 64) * 64;
}
