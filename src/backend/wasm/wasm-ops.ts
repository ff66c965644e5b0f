/**
 * `Ops` over the WASM kernels: every buffer lives in one WebAssembly.Memory (wasm-heap.ts); matmul runs the fused
 * AssemblyScript matvecs (activations quantized to Q8 per 32-block for quantized weights, f32 for float weights),
 * split by rows across helper threads when a pool is given; attention and the GLUs are WASM kernels too; the light
 * ops (norm, rope, add, …) are TypeScript over views of that memory. Weights keep ggml's blocks, in row pairs or
 * 4-row groups where the registry says (wasm-weight-stream.ts); types without a fused kernel are dequantized.
 */

import { LlmError, throwIfAborted } from '../../errors.js';
import { GGML_TYPES, GgmlType } from '../../gguf/types.js';
import { getQuantType } from '../../quant/index.js';
import type {
  Activation,
  AttentionParams,
  GluActivation,
  KvCacheSpec,
  Ops,
  RopeParams,
  StepBatch,
  TopK,
  Weight,
  WeightInfo,
} from '../ops.js';
import type { MoeRouteParams } from '../moe-step.js';
import type { KvRows } from '../ops.js';
import { checkAttentionGeometry } from '../kv-rows.js';
import type { KvShift } from '../kv-shift.js';
import { type KvType, kvRowBytes } from '../kv-type.js';
import { act, type WasmActivation } from './wasm-activation.js';
import { WasmKvCache } from './wasm-kv-cache.js';
import { embedRows, weightRow } from './embed-rows.js';
import { attentionScratchBytes, emptyAttentionCall, runAttentionKernel } from './attention-kernel.js';
import { FUSED_KERNELS, q8RowBytes, type GemvName, type KernelExports } from './kernel-exports.js';
import { beginWasmWeight, type WasmWeight, type WasmWeightStream } from './wasm-weight-stream.js';
import { addBiasRows, addRows, rmsNormRows, RopeTables, ropeRotate, scaleRows, softcapRows } from './row-ops.js';
import type { ThreadPool } from './thread-pool.js';
import type { WasmHeap } from './wasm-heap.js';
import { WasmExperts } from './expert-matmul.js';
import { floatGemm, floatGemmScratchBytes, type RunRows, usesFloatGemm } from './float-gemm.js';
import { HostHybridOps } from '../host-hybrid-ops.js';
import { wasmShortConv } from './short-conv-kernel.js';
import type { ShortConvArgs } from '../short-conv.js';
import type { HostView } from '../delta-net.js';
import { WasmEncoderRows } from './encoder-rows.js';
import { WasmRope } from './rope-kernel.js';
import { wasmAddRow } from './expert-bias-rows.js';
import { SplatActivations } from './splat-activations.js';

/**
 * Below this many multiply-adds a matmul (or attention) stays on the calling thread: waking helpers costs tens of µs,
 * about what a 128×896 Q4_0 matvec (a small model's k/v projection, 115k multiply-adds) takes alone.
 */
const MIN_PARALLEL_WORK = 1 << 18;
/** Bytes of f32 rows dequantized at a time for types without a fused kernel. */
const DEQUANT_CHUNK_BYTES = 1 << 20;

/** The WASM backend (see the file header). */
export class WasmOps extends HostHybridOps implements Ops {
  readonly name = 'wasm';
  readonly description: string;
  private readonly heap: WasmHeap;
  private readonly k: KernelExports;
  private readonly pool: ThreadPool | null;
  private batch: StepBatch | null = null;
  private readonly attnCall = emptyAttentionCall(); // the attention call's operands, refilled per call
  /** `rowBytesOf` bound once (the embedding lookup runs per token). */
  private readonly rowBytes = (w: WasmWeight, r: number): Uint8Array => this.rowBytesOf(w, r);
  private kv: WasmKvCache | null = null;
  private q8 = { byteOffset: 0, byteLength: 0 }; // Q8 activation scratch
  private readonly q8Key = { act: null as WasmActivation | null, version: -1, n: 0, k: 0 }; // rows the Q8 scratch holds
  private f32Scratch = { byteOffset: 0, byteLength: 0 }; // dequantized rows / contiguous x / attention scores
  private readonly ropeTables = new RopeTables();
  private rowCopy = new Uint8Array(0); // one weight row gathered from a row pair (embed, vector)
  private readonly experts: WasmExperts;
  private readonly rows: WasmEncoderRows;
  private readonly ropeKernel: WasmRope;
  private readonly splats = new SplatActivations(() => this.heap); // Q8 rows splatted for prefill
  private readonly runRows: RunRows = (...a) => this.run(...a);

  constructor(heap: WasmHeap, exports: KernelExports, pool: ThreadPool | null, description: string) {
    super();
    this.heap = heap;
    this.k = exports;
    this.pool = pool;
    this.description = description;
    this.rows = new WasmEncoderRows(heap, exports);
    this.ropeKernel = new WasmRope(heap, exports);
    this.addRow = wasmAddRow(exports);
    this.experts = new WasmExperts(
      heap,
      exports,
      this.runRows,
      (x, n, k) => this.quantizeQ8(act(x), n, k),
      (w) => this.vector(w),
    );
  }

  async uploadWeight(info: WeightInfo, data: Uint8Array, signal?: AbortSignal): Promise<Weight> {
    throwIfAborted(signal, `uploading ${info.name}`);
    const stream = this.beginWeight(info);
    const byteLength = stream.byteLength;
    if (data.byteLength < byteLength) {
      throw new LlmError(
        'gguf-invalid',
        `uploading ${info.name}: got ${data.byteLength} bytes, its ${GGML_TYPES.get(info.type)?.name} shape [${info.shape.join(', ')}] needs ${byteLength}`,
        { details: { tensor: info.name, byteLength: data.byteLength, expectedBytes: byteLength } },
      );
    }
    stream.target(0, byteLength).set(data.subarray(0, byteLength));
    stream.commit(0, byteLength);
    return await stream.finish();
  }

  /** Grows the memory once for the weights that follow (with room for the row-pair padding and scratch). */
  reserveWeights(bytes: number): void {
    this.heap.reserve(Math.ceil(bytes * 1.02) + (16 << 20));
  }

  /** Places a weight in WASM memory and returns the stream that fills it in place (wasm-weight-stream.ts). */
  beginWeight(info: WeightInfo): WasmWeightStream {
    return beginWasmWeight({ heap: this.heap, k: this.k, scratch: (bytes) => this.scratch(bytes) }, info);
  }

  createActivation(label: string, maxRows: number, cols: number): Activation {
    const region = this.heap.alloc(maxRows * cols * 4, `activation ${label} [${maxRows}, ${cols}]`);
    const a: WasmActivation = { label, maxRows, cols, byteOffset: region.byteOffset, version: 0 };
    return a;
  }

  createKvCache(spec: KvCacheSpec): KvType {
    this.kv = new WasmKvCache(this.heap, spec, this.kv?.region ?? { byteOffset: 0, byteLength: 0 }, this.k);
    return this.kv.type;
  }

  beginStep(batch: StepBatch): void {
    this.batch = batch;
  }

  setSequence(slot: number, startPos: number, positions?: StepBatch['positions']): void {
    this.batch = { ...this.step(), slot, startPos, positions }; // keeps the step's tokens and `sequences`
  }

  embed(out: Activation, table: Weight, n: number): void {
    const o = act(out);
    embedRows(this.heap.f32, table as WasmWeight, this.step().tokens, o.byteOffset >>> 2, o.cols, n, this.rowBytes);
    o.version++;
  }

  rmsNorm(out: Activation, x: Activation, weight: Weight | null, eps: number, n: number, groupSize?: number): void {
    const o = act(out);
    const g = groupSize ?? x.cols;
    const w = weight ? this.vector(weight) : -1; // f32 index of [g]
    if (!this.rows.rmsNorm(o, act(x), w, g, (n * x.cols) / g, eps))
      rmsNormRows(this.heap.f32, o.byteOffset >>> 2, act(x).byteOffset >>> 2, w, g, (n * x.cols) / g, eps);
    o.version++;
  }

  matmul(out: Activation, x: Activation, w: Weight, n: number, bias?: Weight | null): void {
    const o = act(out);
    const xa = act(x);
    const wt = w as WasmWeight;
    const k = wt.rowLength;
    if (x.cols < k || out.cols < wt.nRows || n > x.maxRows || n > out.maxRows) {
      throw new LlmError(
        'invalid-request',
        `matmul ${wt.name}: x [${n}, ${x.cols}] · W [${wt.nRows}, ${k}]ᵀ → out [${n}, ${out.cols}] does not fit (x ${x.label}, out ${out.label})`,
        { details: { weight: wt.name, n, k, nRows: wt.nRows, xCols: x.cols, outCols: out.cols } },
      );
    }
    const fused = FUSED_KERNELS.get(wt.type);
    if (fused?.rows4 && wt.rows4) {
      const [name, xq] = this.splats.pick(this.k, fused.rows4, this.quantizeQ8(xa, n, k), n, k); // 4-row groups
      this.run(name, wt.byteOffset, xq, o.byteOffset, k, wt.nRows, n, out.cols);
    } else if (fused?.isQ8) {
      this.run(fused.name, wt.byteOffset, this.quantizeQ8(xa, n, k), o.byteOffset, k, wt.nRows, n, out.cols);
    } else if (fused && usesFloatGemm(wt.type, n)) {
      const base = this.scratch(floatGemmScratchBytes(wt, n, x.cols));
      const xc = this.contiguousX(xa, n, k, base);
      floatGemm(this.runRows, this.heap.i32, wt, xc, o.byteOffset, out.cols, n, base, x.cols);
    } else if (fused) {
      this.run(fused.name, wt.byteOffset, this.contiguousX(xa, n, k), o.byteOffset, k, wt.nRows, n, out.cols);
    } else {
      this.matmulDequant(o, xa, wt, n);
    }
    if (bias) addBiasRows(this.heap.f32, o.byteOffset >>> 2, out.cols, this.vector(bias), wt.nRows, n, this.addRow);
    o.version++;
  }

  rope(x: Activation, n: number, params: RopeParams): void {
    const a = act(x);
    const { startPos, positions } = this.step();
    const t = this.ropeTables.get(params, startPos, n, positions);
    if (!this.ropeKernel.rotate(a.byteOffset, a.cols, n, params, t, startPos, positions))
      ropeRotate(this.heap.f32, a.byteOffset >>> 2, a.cols, n, params, t.cos, t.sin);
    a.version++;
  }

  storeKv(layer: number, k: Activation, v: Activation, n: number): void {
    const { startPos } = this.step();
    const spec = this.requireKv();
    if (startPos + n > spec.contextLength) {
      throw new LlmError(
        'context-overflow',
        `storing KV of positions ${startPos}…${startPos + n - 1}: the context holds ${spec.contextLength} positions`,
        { details: { startPos, n, contextLength: spec.contextLength } },
      );
    }
    const cols = spec.layers[layer]?.nKvHeads * spec.layers[layer]?.headDim;
    if (k.cols < cols || v.cols < cols || k.cols !== v.cols) {
      throw new LlmError(
        'invalid-request',
        `storing KV of layer ${layer}: k/v rows of ${k.cols}/${v.cols} values do not fit the layer's ${cols}`,
      );
    }
    this.requireKvCache().store(this.step().slot, layer, act(k).byteOffset, act(v).byteOffset, k.cols, n, startPos);
  }

  attention(out: Activation, q: Activation, layer: number, n: number, params: AttentionParams): void {
    const spec = this.requireKv();
    const { startPos, slot } = this.step();
    checkAttentionGeometry(spec, layer, params);
    if (startPos + n > spec.contextLength) {
      throw new LlmError(
        'invalid-request',
        `attention of layer ${layer}: positions ${startPos}…${startPos + n - 1} are outside the KV cache (${spec.contextLength} positions)`,
        { details: { layer, startPos, n } },
      );
    }
    const o = act(out);
    const ctx = startPos + n;
    const cache = this.requireKvCache().attentionInputs(slot, layer, act(q).byteOffset, q.cols, n);
    // [nHeads, ctx] f32, parameters, slopes, f16 KV widening blocks, split partials, a batch's widened f16 K/V
    const scores = this.scratch(attentionScratchBytes(params, ctx, cache.kind, n));
    const c = this.attnCall; // refilled per call: no object per layer per token
    c.out = o.byteOffset;
    c.outCols = out.cols;
    c.q = cache.q;
    // q row stride as the cache prepared it: f32 (f32 / f16 KV) or Q8_0 blocks (q8_0 / q4_0 KV).
    c.qStride = cache.kind <= 1 ? q.cols * 4 : kvRowBytes('q8_0', q.cols);
    c.k = cache.k;
    c.v = cache.v;
    c.kind = cache.kind;
    c.sinks = params.sinks ? this.vector(params.sinks) << 2 : 0; // f32 [nHeads] sink logits (gpt-oss), 0 = none
    c.n = n;
    c.startPos = startPos;
    c.params = params;
    runAttentionKernel(this.heap, this.k, this.pool, scores, c);
    this.requireKvCache().finishAttention(layer, o.byteOffset, out.cols, n);
    o.version++;
  }

  glu(out: Activation, gate: Activation, up: Activation, n: number, activation: GluActivation): void {
    const o = act(out);
    this.k.glu_f32(o.byteOffset, act(gate).byteOffset, act(up).byteOffset, n * out.cols, activation === 'gelu' ? 1 : 0);
    o.version++;
  }

  override swigluOai(out: Activation, gate: Activation, up: Activation, n: number): void {
    this.k.glu_f32(act(out).byteOffset, act(gate).byteOffset, act(up).byteOffset, n * out.cols, 2); // glu.ts act 2
    act(out).version++;
  }

  override layerNorm(out: Activation, x: Activation, w: Weight | null, b: Weight | null, eps: number, n: number): void {
    const at = (v: Weight | null) => (v ? this.vector(v) * 4 : 0); // byte address of f32 [cols], 0 = none
    if (!this.rows.layerNorm(act(out), act(x), at(w), at(b), eps, n)) super.layerNorm(out, x, w, b, eps, n);
    act(out).version++;
  }

  override gelu(x: Activation, n: number): void {
    if (!this.rows.gelu(act(x), n)) super.gelu(x, n);
    act(x).version++;
  }

  moeRoute(ids: Activation, weights: Activation, logits: Activation, n: number, params: MoeRouteParams): void {
    this.experts.route(act(ids), act(weights), act(logits), n, params);
    act(ids).version++;
    act(weights).version++;
  }

  matmulExperts(
    out: Activation,
    x: Activation,
    w: Weight,
    nExperts: number,
    ids: Activation,
    n: number,
    xPerSlot: boolean,
  ): void {
    this.experts.matmul(act(out), act(x), w as WasmWeight, nExperts, act(ids), n, xPerSlot);
    act(out).version++;
  }

  moeCombine(out: Activation, y: Activation, weights: Activation, n: number): void {
    this.experts.combine(act(out), act(y), act(weights), n);
    act(out).version++;
  }

  sigmoidGatedAdd(out: Activation, y: Activation, gate: Activation, n: number): void {
    this.experts.sigmoidGatedAdd(act(out), act(y), act(gate), n);
    act(out).version++;
  }

  add(out: Activation, a: Activation, b: Activation, n: number): void {
    const o = act(out);
    if (!this.rows.add(o, act(a), act(b), n * out.cols))
      addRows(this.heap.f32, o.byteOffset >>> 2, act(a).byteOffset >>> 2, act(b).byteOffset >>> 2, n * out.cols);
    o.version++;
  }

  scale(x: Activation, s: number, n: number): void {
    scaleRows(this.heap.f32, act(x).byteOffset >>> 2, s, n * x.cols);
    act(x).version++;
  }

  softcap(x: Activation, cap: number, n: number): void {
    softcapRows(this.heap.f32, act(x).byteOffset >>> 2, cap, n * x.cols);
    act(x).version++;
  }

  copyRows(out: Activation, x: Activation, srcRow: number, n: number, dstRow = 0): void {
    const s = (act(x).byteOffset >>> 2) + srcRow * x.cols;
    this.heap.f32.copyWithin((act(out).byteOffset >>> 2) + dstRow * out.cols, s, s + n * x.cols);
    act(out).version++;
  }

  endStep(): void {
    this.batch = null;
  }

  async read(x: Activation, n: number): Promise<Float32Array> {
    const s = act(x).byteOffset >>> 2;
    return this.heap.f32.slice(s, s + n * x.cols);
  }

  async argmax(x: Activation, row: number): Promise<number> {
    return this.k.argmax_f32(act(x).byteOffset + row * x.cols * 4, x.cols);
  }

  async topK(x: Activation, row: number, k: number): Promise<TopK> {
    const at = act(x).byteOffset + row * x.cols * 4;
    const m = Math.max(0, Math.min(k, x.cols));
    const idsAt = this.scratch(m * 4);
    const count = this.k.topk_f32(at, x.cols, m, idsAt);
    const ids = this.heap.i32.slice(idsAt >>> 2, (idsAt >>> 2) + count);
    return { ids, logits: Float32Array.from(ids, (j) => this.heap.f32[(at >>> 2) + j]) };
  }

  protected override shortConvRows(a: ShortConvArgs): void {
    wasmShortConv(this.k, a);
  }

  protected readonly view: HostView = (t) => [this.heap.f32, 'nRows' in t ? this.vector(t) : act(t).byteOffset >>> 2];

  protected override written(a: Activation): void {
    act(a).version++;
  }

  copyKv(srcSlot: number, dstSlot: number, nPositions: number): void {
    this.requireKvCache().copy(srcSlot, dstSlot, nPositions);
  }

  async shiftKv(slot: number, shift: KvShift): Promise<void> {
    this.requireKvCache().shift(slot, shift);
  }

  async readKv(slot: number, nPositions: number): Promise<KvRows> {
    return this.requireKvCache().read(slot, nPositions);
  }

  async writeKv(slot: number, rows: KvRows): Promise<void> {
    this.requireKvCache().write(slot, rows);
  }

  destroy(): void {
    this.pool?.destroy();
    this.kv = null;
    this.batch = null;
  }

  /** Runs a matvec over rows 0 … rows−1, on all threads when the work is large enough. */
  private run(
    name: GemvName,
    w: number,
    x: number,
    out: number,
    k: number,
    rows: number,
    n: number,
    outStride: number,
  ): void {
    const fn = this.k[name];
    if (this.pool && rows >= 2 * this.pool.nThreads && rows * k * n >= MIN_PARALLEL_WORK)
      this.pool.dispatch(name, fn, w, x, out, k, n, outStride, rows);
    else fn(w, x, out, k, 0, rows, n, outStride);
  }

  /** Q8 activation rows of x[0 … n) (first k columns), reused while x is unchanged. Returns their byte offset. */
  private quantizeQ8(x: WasmActivation, n: number, k: number): number {
    const key = this.q8Key;
    const bytes = n * q8RowBytes(k);
    if (bytes > this.q8.byteLength) {
      this.q8 = this.heap.alloc(Math.max(bytes, 2 * this.q8.byteLength), 'Q8 activation scratch');
      key.act = null; // a new region: nothing quantized in it yet
    }
    if (key.act === x && key.version === x.version && key.n >= n && key.k === k) return this.q8.byteOffset;
    this.k.quantize_q8(x.byteOffset, x.cols, n, k, this.q8.byteOffset);
    key.act = x; // updated in place: matmuls quantize several times per token
    key.version = x.version;
    key.n = n;
    key.k = k;
    return this.q8.byteOffset;
  }

  /** Byte offset of x's first n rows as contiguous f32 [n, k] (x itself when its rows are exactly k wide). */
  private contiguousX(x: WasmActivation, n: number, k: number, at = -1): number {
    if (x.cols === k) return x.byteOffset;
    const dst = at >= 0 ? at : this.scratch(n * k * 4);
    const f32 = this.heap.f32;
    const src = x.byteOffset >>> 2;
    for (let i = 0; i < n; i++) f32.copyWithin((dst >>> 2) + i * k, src + i * x.cols, src + i * x.cols + k);
    return dst;
  }

  /** Types without a fused kernel: dequantize a chunk of rows to f32 (registry `dequantizeRow`), then gemv_f32. */
  private matmulDequant(o: WasmActivation, x: WasmActivation, w: WasmWeight, n: number): void {
    const k = w.rowLength;
    const qt = getQuantType(w.type);
    const chunkRows = Math.max(1, Math.floor(DEQUANT_CHUNK_BYTES / (k * 4)));
    const xBytes = x.cols === k ? 0 : Math.ceil((n * k * 4) / 64) * 64;
    const base = this.scratch(xBytes + chunkRows * k * 4);
    const xf = this.contiguousX(x, n, k, base);
    const buf = base + xBytes; // [chunkRows, k] f32
    for (let r0 = 0; r0 < w.nRows; r0 += chunkRows) {
      const rows = Math.min(chunkRows, w.nRows - r0);
      const src = w.byteOffset + r0 * w.rowBytes;
      qt.dequantizeRow(
        this.heap.u8.subarray(src, src + rows * w.rowBytes),
        this.heap.f32.subarray(buf >>> 2, (buf >>> 2) + rows * k),
        rows * k,
      );
      this.run('gemv_f32', buf, xf, o.byteOffset + r0 * 4, k, rows, n, o.cols);
    }
  }

  /** Byte offset of a scratch region of at least `bytes` (contents not preserved across calls). */
  private scratch(bytes: number): number {
    if (bytes > this.f32Scratch.byteLength) {
      this.f32Scratch = this.heap.alloc(Math.max(bytes, 2 * this.f32Scratch.byteLength), 'f32 scratch');
    }
    return this.f32Scratch.byteOffset;
  }

  /** f32 index of a 1-D weight's values (dequantized once for non-f32 types). */
  private vector(w: Weight): number {
    const wt = w as WasmWeight;
    if (wt.type === GgmlType.F32) return wt.byteOffset >>> 2;
    if (wt.vectorOffset < 0) {
      const len = wt.rowLength * wt.nRows;
      const region = this.heap.alloc(len * 4, `f32 copy of ${wt.name}`);
      const f32 = this.heap.f32;
      const qt = getQuantType(wt.type);
      for (let r = 0; r < wt.nRows; r++) {
        const dst = (region.byteOffset >>> 2) + r * wt.rowLength;
        qt.dequantizeRow(this.rowBytesOf(wt, r), f32.subarray(dst, dst + wt.rowLength), wt.rowLength);
      }
      wt.vectorOffset = region.byteOffset;
    }
    return wt.vectorOffset >>> 2;
  }

  /** Row r of a quantized weight in GGUF layout (embed-rows.ts `weightRow`; the copy buffer is reused). */
  private rowBytesOf(w: WasmWeight, r: number): Uint8Array {
    if (this.rowCopy.length !== w.rowBytes) this.rowCopy = new Uint8Array(w.rowBytes); // one embedding table: once
    return weightRow(this.heap.u8, w, r, this.rowCopy);
  }

  protected step(): StepBatch {
    if (!this.batch) throw new LlmError('invalid-request', 'wasm ops: an op was issued outside beginStep … endStep');
    return this.batch;
  }

  private requireKvCache(): WasmKvCache {
    if (!this.kv) throw new LlmError('invalid-request', 'wasm ops: the KV cache was used before createKvCache');
    return this.kv;
  }

  private requireKv(): KvCacheSpec {
    return this.requireKvCache().spec;
  }
}
