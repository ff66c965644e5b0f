/**
 * The WebGPU implementation of `Ops`: weights repacked into aligned storage buffers, static activations and KV
 * cache, and every op recorded as one dispatch (a few for split weights and attention) into the step's single
 * command submission. Reads (read/argmax/topK) append their copy to the pending work and map a pooled buffer.
 */

import { BufferUsage } from './gpu-flags.js';
import { LlmError, throwIfAborted } from '../../errors.js';
import { GgmlType } from '../../gguf/types.js';
import type {
  Activation,
  AttentionParams,
  FusedMatmulOptions,
  FusedNorm,
  GluActivation,
  KvCacheSpec,
  Ops,
  RopeParams,
  StepBatch,
  TopK,
  Weight,
  WeightInfo,
} from '../ops.js';
import type { KvRows } from '../ops.js';
import { checkKvRows } from '../kv-rows.js';
import type { GpuContext } from './device.js';
import { watchDevice } from './device.js';
import { planPrefillAttention, PREFILL_ATTN_WG_SIZE, prefillAttentionGrid, prefillAttentionSplits } from './attention-prefill.js';
import { BCAST_BLOCK, bcastQuantSource, canFuseGlu, GEMV_BCAST_DEBUG } from './gemv-bcast.js';
import { type CachedPipeline, PipelineCache, type PipelineSpec } from './pipelines.js';
import { ropeInverseFrequencies, ropeYarnUniforms } from './rope-table.js';
import { grid, PARAMS_BYTES, type RecorderStats, StepRecorder } from './step-recorder.js';
import { getGpuQuantLayout, type GpuQuantLayout, repackRows, rowWords, splitRows, vectorToF32 } from './upload.js';

/** A weight on the GPU: whole rows split into parts that each fit one storage binding. */
interface GpuWeight extends Weight {
  readonly layout: GpuQuantLayout;
  /** u32 words per repacked row. */
  readonly rowStride: number;
  readonly parts: readonly { readonly buffer: GPUBuffer; readonly rowStart: number; readonly nRows: number }[];
  /** 1-D tensors: the values as f32 (norm weights, biases). */
  readonly vector: GPUBuffer | null;
}

/** An activation on the GPU. */
interface GpuActivation extends Activation {
  readonly buffer: GPUBuffer; // (maxRows, cols) f32
}

/** Workgroup sizes (powers of two ≤ 256: SwiftShader's cap). */
const WG_ROW = 64; // one workgroup per row / group / head
const WG_FLAT = 256; // elementwise and single-workgroup scans
/** Positions per attention tile, and the most splits of a decode row. */
const ATTN_MIN_SPLIT = 64;
const ATTN_MAX_SPLITS = 32;
/** Longest row for which decode uses one row per invocation (gemv_rows) instead of a workgroup per row. */
const GEMV_ROWS_MAX_K = 256;
/** Rows per workgroup of each decode kernel. */
const GEMV_ROWS_PER_GROUP = { gemv: 1, gemv_rows: 64, gemv_sg: 16 } as const;
/** Largest gemv_bcast workgroup (two rows per invocation); ≥ 4 × 8 so the quarter size still holds a subgroup of 8. */
const BCAST_WG = 64;
/** Largest batch that software adapters run through the decode kernels instead of the tiled gemm. */
const SOFTWARE_GEMV_MAX_N = 8;
/** Largest k of topK. */
const MAX_TOP_K = 256;
/** Values per topk_chunk workgroup (4 · WG_FLAT). */
const TOPK_CHUNK = 1024;

/** WebGPU `Ops` plus counters and the device limits (see `createWebGpuOps`). */
export class WebGpuOps implements Ops {
  readonly name = 'webgpu';
  readonly description: string;
  private readonly device: GPUDevice;
  private readonly pipes: PipelineCache;
  private readonly rec: StepRecorder;
  private readonly maxBinding: number;
  private readonly maxWeightBinding: number;
  private readonly buffers = new Set<GPUBuffer>();
  private readonly dummy: GPUBuffer; // (4) f32 zeros, bound where a binding is unused
  private tokens: GPUBuffer; // (tokenCapacity) i32 token ids of the step
  private tokenCapacity = 512;
  private kv: { k: GPUBuffer; v: GPUBuffer }[] = []; // per layer: (nSlots, contextLength, nKvHeads·headDim) F
  private kvSpec: KvCacheSpec | null = null;
  private step: { startPos: number; slot: number; n: number } | null = null;
  private flushScheduled = false;
  private partial: GPUBuffer | null = null; // (rows, nHeads, splits, headDim + 2) f32
  private partialFloats = 0;
  private readonly ropeTables = new Map<string, GPUBuffer>(); // (nRot/2) f32 inverse frequencies
  private readonly arrayIds = new WeakMap<Float32Array, number>(); // freqFactors identity → table key
  private nextArrayId = 0;
  private readonly result: GPUBuffer; // (2·MAX_TOP_K) u32 argmax / topK results
  private topkCand: GPUBuffer | null = null; // (nChunks·k, 2) u32
  private isDestroyed = false;

  constructor(private readonly ctx: GpuContext) {
    this.device = ctx.device;
    this.maxBinding = Math.min(ctx.device.limits.maxStorageBufferBindingSize, ctx.device.limits.maxBufferSize);
    this.maxWeightBinding = ctx.maxBindingBytes;
    this.pipes = new PipelineCache(ctx.device, ctx.isF16 ? 'f16' : 'f32', ctx.isSubgroups, PARAMS_BYTES);
    this.rec = new StepRecorder(ctx.device);
    this.description =
      `webgpu ${ctx.isF16 ? 'f16' : 'f32'} ${ctx.isSubgroups ? 'subgroups' : 'shared-memory'}` +
      `${ctx.isSoftware ? ' software' : ''} (${ctx.adapterDescription})`;
    this.dummy = this.buffer('dummy', 16, 0);
    this.tokens = this.buffer('tokens', this.tokenCapacity * 4, BufferUsage.COPY_DST);
    this.result = this.buffer('result', MAX_TOP_K * 8, BufferUsage.COPY_SRC);
    watchDevice(ctx.device, (reason) => {
      if (!this.isDestroyed) this.rec.markLost(reason);
    });
  }

  /** Dispatch / submission / readback counters since creation. */
  get stats(): Readonly<RecorderStats> {
    return this.rec.stats;
  }

  /** Pipelines built so far. */
  get pipelineCount(): number {
    return this.pipes.size;
  }

  /** What the memory plan needs: the device's buffer limits and the KV element size (2 on the f16 path). */
  get memoryLimits(): { readonly maxStorageBufferBindingSize: number; readonly maxBufferSize: number; readonly kvBytesPerElement: 2 | 4 } {
    const l = this.device.limits;
    return { maxStorageBufferBindingSize: l.maxStorageBufferBindingSize, maxBufferSize: l.maxBufferSize, kvBytesPerElement: this.ctx.isF16 ? 2 : 4 };
  }

  // ── memory ───────────────────────────────────────────────────────────────────────────────────────────────────

  async uploadWeight(info: WeightInfo, data: Uint8Array, signal?: AbortSignal): Promise<Weight> {
    throwIfAborted(signal, `uploading ${info.name}`);
    this.rec.checkAlive();
    const rowLength = info.shape[0] ?? 1;
    const nRows = info.shape.slice(1).reduce((a, b) => a * b, 1);
    if (info.shape.length === 1) {
      const values = vectorToF32(info.name, info.type, data, rowLength);
      const buffer = this.buffer(info.name, values.byteLength, BufferUsage.COPY_DST);
      this.device.queue.writeBuffer(buffer, 0, values.buffer as ArrayBuffer, values.byteOffset, values.byteLength);
      const layout = getGpuQuantLayout(GgmlType.F32);
      const w: GpuWeight = { name: info.name, type: info.type, rowLength, nRows: 1, layout, rowStride: rowLength, parts: [{ buffer, rowStart: 0, nRows: 1 }], vector: buffer };
      return w;
    }
    const layout = getGpuQuantLayout(info.type, info.name);
    if (rowLength % layout.blockElements !== 0) {
      throw new LlmError('gguf-invalid', `uploading ${info.name}: row length ${rowLength} is not a multiple of the ${layout.name} block size ${layout.blockElements}`, {
        details: { tensor: info.name, rowLength, blockElements: layout.blockElements },
      });
    }
    const needBytes = (rowLength / layout.blockElements) * layout.blockBytes * nRows;
    if (data.byteLength < needBytes) {
      throw new LlmError('gguf-invalid', `uploading ${info.name}: ${data.byteLength} bytes given, ${needBytes} needed for shape [${info.shape.join(', ')}] of ${layout.name}`, {
        details: { tensor: info.name, byteLength: data.byteLength, needBytes },
      });
    }
    const rowStride = rowWords(layout, rowLength);
    const parts = [];
    for (const part of splitRows(info.name, nRows, rowStride * 4, this.maxWeightBinding)) {
      throwIfAborted(signal, `uploading ${info.name}`);
      const bytes = repackRows(layout, data, rowLength, part);
      const buffer = this.buffer(info.name, bytes.byteLength, BufferUsage.COPY_DST);
      this.device.queue.writeBuffer(buffer, 0, bytes.buffer, bytes.byteOffset, bytes.byteLength);
      parts.push({ buffer, rowStart: part.rowStart, nRows: part.nRows });
      if (parts.length > 1) await Promise.resolve(); // let an abort land between big parts
    }
    const w: GpuWeight = { name: info.name, type: info.type, rowLength, nRows, layout, rowStride, parts, vector: null };
    return w;
  }

  createActivation(label: string, maxRows: number, cols: number): Activation {
    const bytes = maxRows * cols * 4;
    if (bytes > this.maxBinding) {
      throw new LlmError('out-of-memory', `creating activation ${label} [${maxRows}, ${cols}]: ${bytes} bytes is over the device's storage binding limit of ${this.maxBinding}; use a smaller batch (ubatch) size`, {
        details: { label, maxRows, cols, bytes, maxStorageBufferBindingSize: this.maxBinding },
      });
    }
    const buffer = this.buffer(label, bytes, BufferUsage.COPY_SRC | BufferUsage.COPY_DST);
    if (maxRows > this.tokenCapacity) {
      this.buffers.delete(this.tokens);
      this.tokens.destroy();
      this.tokenCapacity = maxRows;
      this.tokens = this.buffer('tokens', maxRows * 4, BufferUsage.COPY_DST);
    }
    const a: GpuActivation = { label, maxRows, cols, buffer };
    return a;
  }

  createKvCache(spec: KvCacheSpec): void {
    this.flushNow();
    for (const l of this.kv) {
      this.release(l.k);
      this.release(l.v);
    }
    const elemBytes = this.ctx.isF16 ? 2 : 4;
    const layerBytes = spec.nSlots * spec.contextLength * spec.nKvHeads * spec.headDim * elemBytes;
    if (layerBytes > this.maxBinding) {
      const maxCtx = Math.floor(this.maxBinding / (spec.nSlots * spec.nKvHeads * spec.headDim * elemBytes));
      throw new LlmError('out-of-memory', `allocating the KV cache: one layer needs ${layerBytes} bytes at context ${spec.contextLength}, over the storage binding limit of ${this.maxBinding}; use a context length of at most ${maxCtx}`, {
        details: { layerBytes, contextLength: spec.contextLength, maxContextLength: maxCtx, maxStorageBufferBindingSize: this.maxBinding },
      });
    }
    const size = Math.ceil(layerBytes / 4) * 4;
    this.kv = [];
    for (let i = 0; i < spec.nLayers; i++) {
      // COPY_SRC / COPY_DST: readKv / writeKv (the persisted prompt cache).
      const copy = BufferUsage.COPY_SRC | BufferUsage.COPY_DST;
      this.kv.push({ k: this.buffer(`k_cache.${i}`, size, copy), v: this.buffer(`v_cache.${i}`, size, copy) });
    }
    this.kvSpec = spec;
  }

  // ── step ─────────────────────────────────────────────────────────────────────────────────────────────────────

  beginStep(batch: StepBatch): void {
    this.rec.checkAlive();
    this.flushNow(); // the token write must come after every previously recorded dispatch
    const n = batch.tokens.length;
    if (n > this.tokenCapacity) {
      throw new LlmError('invalid-request', `beginStep: ${n} tokens exceed the largest activation (${this.tokenCapacity} rows); split the batch`, {
        details: { tokens: n, maxRows: this.tokenCapacity },
      });
    }
    if (n > 0) this.device.queue.writeBuffer(this.tokens, 0, batch.tokens.buffer, batch.tokens.byteOffset, n * 4);
    this.step = { startPos: batch.startPos, slot: batch.slot, n };
  }

  embed(out: Activation, table: Weight, n: number): void {
    const o = out as GpuActivation;
    const w = table as GpuWeight;
    const pipe = this.pipe({ kernel: 'embed', quant: w.layout, wgSize: WG_ROW });
    const groupsX = Math.ceil(w.rowLength / (4 * WG_ROW));
    for (const part of w.parts) {
      this.rec.dispatch(pipe, [null, part.buffer, this.tokens, o.buffer], (p) => p.u(w.rowLength).u(w.rowStride).u(part.rowStart).u(part.nRows).u(o.cols), [groupsX, n, 1]);
    }
  }

  rmsNorm(out: Activation, x: Activation, weight: Weight | null, eps: number, n: number, groupSize?: number): void {
    const o = out as GpuActivation;
    const xa = x as GpuActivation;
    const g = groupSize ?? xa.cols;
    if (xa.cols % g !== 0 || o.cols !== xa.cols) {
      throw new LlmError('invalid-request', `rmsNorm: ${xa.cols} columns are not whole groups of ${g} (or out has ${o.cols} columns)`);
    }
    const inPlace = o.buffer === xa.buffer;
    const pipe = this.pipe({ kernel: 'rms_norm', entry: inPlace ? 'main_inplace' : 'main', wgSize: WG_ROW });
    const wb = weight ? (weight as GpuWeight).vector ?? (weight as GpuWeight).parts[0]!.buffer : this.dummy;
    this.rec.dispatch(pipe, [null, inPlace ? null : xa.buffer, o.buffer, wb], (p) => p.u(xa.cols).u(g).f(eps).u(weight ? 1 : 0), [xa.cols / g, n, 1]);
  }

  matmul(out: Activation, x: Activation, w: Weight, n: number, bias?: Weight | null): void {
    const o = out as GpuActivation;
    const xa = x as GpuActivation;
    const wt = w as GpuWeight;
    if (xa.cols < wt.rowLength || o.cols < wt.nRows || o.buffer === xa.buffer) {
      throw new LlmError('invalid-request', `matmul ${wt.name}: x has ${xa.cols} columns for rows of ${wt.rowLength}, out ${o.cols} columns for ${wt.nRows} rows (out must not be x)`);
    }
    if (this.bcast(o, xa, wt, n, bias ?? null, null, false, null)) return; // software adapters: gemv_bcast
    // Decode: one row per invocation for short rows (no idle lanes, no barriers); longer rows one subgroup per
    // row when subgroups exist, else a row per SIMD lane on software adapters and a workgroup per row on GPUs. Prefill: the tiled
    // gemm — except small batches on software adapters, which the decode kernels run faster per token.
    const kind = this.gemvKind(wt.rowLength, n);
    const pipe = this.pipe({ kernel: kind, quant: wt.layout, wgSize: 64 });
    const b = bias ? (bias as GpuWeight).vector ?? (bias as GpuWeight).parts[0]!.buffer : this.dummy;
    for (const part of wt.parts) {
      const groups: [number, number, number] =
        kind === 'gemm' ? [Math.ceil(part.nRows / 32), Math.ceil(n / 32), 1] : grid(Math.ceil(part.nRows / GEMV_ROWS_PER_GROUP[kind]), n);
      this.rec.dispatch(
        pipe,
        [null, part.buffer, xa.buffer, o.buffer, b],
        (p) => p.u(wt.rowLength).u(part.nRows).u(wt.rowStride).u(xa.cols).u(o.cols).u(part.rowStart).u(bias ? 1 : 0).u(0).u(n),
        groups,
      );
    }
  }

  matmulFused(out: Activation, x: Activation, w: Weight, n: number, options: FusedMatmulOptions): boolean {
    const o = out as GpuActivation;
    const xa = x as GpuActivation;
    const wt = w as GpuWeight;
    if (xa.cols < wt.rowLength || o.cols < wt.nRows || o.buffer === xa.buffer) {
      throw new LlmError('invalid-request', `matmulFused ${wt.name}: x has ${xa.cols} columns for rows of ${wt.rowLength}, out ${o.cols} columns for ${wt.nRows} rows (out must not be x)`);
    }
    return this.bcast(o, xa, wt, n, options.bias ?? null, options.norm ?? null, options.accumulate === true, null);
  }

  matmulGlu(out: Activation, x: Activation, gate: Weight, up: Weight, n: number, act: GluActivation, norm: FusedNorm | null): boolean {
    const o = out as GpuActivation;
    const xa = x as GpuActivation;
    const g = gate as GpuWeight;
    const u = up as GpuWeight;
    const sameShape = g.type === u.type && g.rowLength === u.rowLength && g.nRows === u.nRows && g.rowStride === u.rowStride;
    if (!sameShape || g.parts.length !== 1 || u.parts.length !== 1 || !canFuseGlu(g.layout) || o.buffer === xa.buffer) return false;
    if (xa.cols < g.rowLength || o.cols < g.nRows) {
      throw new LlmError('invalid-request', `matmulGlu ${g.name}: x has ${xa.cols} columns for rows of ${g.rowLength}, out ${o.cols} columns for ${g.nRows} rows`);
    }
    return this.bcast(o, xa, g, n, null, norm, false, { up: u, act });
  }

  rope(x: Activation, n: number, params: RopeParams): void {
    const xa = x as GpuActivation;
    const st = this.requireStep('rope');
    const half = params.nRot / 2;
    const total = n * (xa.cols / params.headDim) * half;
    const y = ropeYarnUniforms(params);
    const table = this.ropeTable(params);
    const pipe = this.pipe({ kernel: 'rope', wgSize: WG_FLAT });
    this.rec.dispatch(
      pipe,
      [null, xa.buffer, table],
      (p) => p.u(xa.cols).u(params.headDim).u(params.nRot).u(st.startPos).u(params.kind === 'neox' ? 1 : 0).u(total)
        .f(params.freqScale).f(y.extFactor).f(y.mscale).f(y.corrLo).f(y.corrHi),
      grid(Math.ceil(total / WG_FLAT)),
    );
  }

  ropeStoreKv(layer: number, q: Activation, k: Activation, v: Activation, n: number, params: RopeParams): boolean {
    const qa = q as GpuActivation;
    const ka = k as GpuActivation;
    const va = v as GpuActivation;
    const st = this.requireStep('ropeStoreKv');
    const spec = this.requireKv('ropeStoreKv', layer);
    const kvCols = spec.nKvHeads * spec.headDim;
    if (ka.cols !== kvCols || va.cols !== kvCols || qa.cols % params.headDim !== 0) return false;
    if (qa.buffer === ka.buffer || qa.buffer === va.buffer || ka.buffer === va.buffer) return false; // distinct buffers
    if (st.startPos + n > spec.contextLength) {
      throw new LlmError('context-overflow', `ropeStoreKv: positions ${st.startPos}…${st.startPos + n - 1} exceed the context length ${spec.contextLength}`, {
        details: { startPos: st.startPos, n, contextLength: spec.contextLength },
      });
    }
    const half = params.nRot / 2;
    const total = n * ((qa.cols + kvCols) / params.headDim) * half + n * kvCols;
    const y = ropeYarnUniforms(params);
    const l = this.kv[layer]!;
    const pipe = this.pipe({ kernel: 'rope_store', wgSize: WG_FLAT });
    this.rec.dispatch(
      pipe,
      [null, qa.buffer, ka.buffer, va.buffer, this.ropeTable(params), l.k, l.v],
      (p) => p.u(qa.cols).u(kvCols).u(params.headDim).u(params.nRot).u(st.startPos).u(params.kind === 'neox' ? 1 : 0).u(n)
        .u((st.slot * spec.contextLength + st.startPos) * kvCols)
        .f(params.freqScale).f(y.extFactor).f(y.mscale).f(y.corrLo).f(y.corrHi),
      grid(Math.ceil(total / WG_FLAT)),
    );
    return true;
  }

  storeKv(layer: number, k: Activation, v: Activation, n: number): void {
    const st = this.requireStep('storeKv');
    const spec = this.requireKv('storeKv', layer);
    const kvCols = spec.nKvHeads * spec.headDim;
    if (st.startPos + n > spec.contextLength) {
      throw new LlmError('context-overflow', `storeKv: positions ${st.startPos}…${st.startPos + n - 1} exceed the context length ${spec.contextLength}`, {
        details: { startPos: st.startPos, n, contextLength: spec.contextLength },
      });
    }
    const count = n * kvCols;
    const dst = (st.slot * spec.contextLength + st.startPos) * kvCols;
    const pipe = this.pipe({ kernel: 'store_kv', wgSize: WG_FLAT });
    const l = this.kv[layer]!;
    this.rec.dispatch(pipe, [null, (k as GpuActivation).buffer, (v as GpuActivation).buffer, l.k, l.v], (p) => p.u(count).u(dst), grid(Math.ceil(count / WG_FLAT)));
  }

  attention(out: Activation, q: Activation, layer: number, n: number, params: AttentionParams): void {
    const st = this.requireStep('attention');
    const spec = this.requireKv('attention', layer);
    const o = out as GpuActivation;
    const qa = q as GpuActivation;
    const { nHeads, nKvHeads, headDim } = params;
    if (headDim > 4 * WG_ROW || nHeads % nKvHeads !== 0 || o.buffer === qa.buffer) {
      throw new LlmError('invalid-request', `attention: unsupported geometry (headDim ${headDim} ≤ ${4 * WG_ROW}, nHeads ${nHeads} a multiple of nKvHeads ${nKvHeads}, out distinct from q)`);
    }
    const kvCols = nKvHeads * headDim;
    const l = this.kv[layer]!;
    const kvLen = st.startPos + n;
    const rowFloats = nHeads * (headDim + 2);
    const needFloats = Math.max(qa.maxRows, ATTN_MAX_SPLITS) * rowFloats;
    if (this.partialFloats < needFloats) {
      if (this.partial) this.release(this.partial);
      this.partial = this.buffer('attention-partial', needFloats * 4, 0);
      this.partialFloats = needFloats;
    }
    const maxSplits = Math.max(1, Math.min(Math.floor(this.partialFloats / (n * rowFloats)), ATTN_MAX_SPLITS));
    // Prefill (n ≥ 2): the tiled causal kernel, K/V tiles shared by a workgroup's tokens and GQA heads; split-K on
    // GPUs when it alone would leave the device idle (a few tokens after a long prefix).
    const group = nHeads / nKvHeads;
    const tiles = n >= 2 ? planPrefillAttention(headDim, n * group, this.ctx.isF16 ? 2 : 4, this.device.limits.maxComputeWorkgroupStorageSize) : null;
    if (tiles) {
      const groups = prefillAttentionGrid(tiles, n, nHeads, nKvHeads);
      const splits = this.ctx.isSoftware ? 1 : prefillAttentionSplits(groups[0] * groups[1], kvLen, tiles.keys, maxSplits);
      const pipe = this.pipe({
        kernel: 'attention_prefill',
        wgSize: PREFILL_ATTN_WG_SIZE,
        constants: { HD: tiles.headDim, ROWS: tiles.rows, KEYS: tiles.keys },
        tag: `hd${tiles.headDim}.r${tiles.rows}.k${tiles.keys}`,
      });
      this.rec.dispatch(
        pipe,
        [null, qa.buffer, l.k, l.v, o.buffer, this.partial],
        (p) => p.u(n).u(group).u(qa.cols).u(kvCols).u(st.slot * spec.contextLength * kvCols).u(st.startPos)
          .u(params.slidingWindow).f(params.scale).f(params.softcap).u(splits).u(Math.ceil(kvLen / splits)).u(splits === 1 ? 1 : 0),
        [groups[0], groups[1], splits],
      );
      this.combineAttention(o, nHeads, headDim, splits, n);
      return;
    }
    const nSplits = Math.max(1, Math.min(Math.ceil(kvLen / ATTN_MIN_SPLIT), maxSplits));
    const splitLen = Math.ceil(kvLen / nSplits);
    const attn = this.pipe({ kernel: 'attention', wgSize: WG_ROW });
    this.rec.dispatch(
      attn,
      [null, qa.buffer, l.k, l.v, o.buffer, this.partial],
      (p) => p.u(nHeads).u(nKvHeads).u(headDim).u(qa.cols).u(kvCols).u(st.slot * spec.contextLength * kvCols).u(st.startPos)
        .u(params.slidingWindow).u(nSplits).u(splitLen).u(nSplits === 1 ? 1 : 0).f(params.scale).f(params.softcap),
      [nSplits, nHeads, n],
    );
    this.combineAttention(o, nHeads, headDim, nSplits, n);
  }

  /** Merges the split-K partial rows of attention into `o` (nothing to do for one split). */
  private combineAttention(o: GpuActivation, nHeads: number, headDim: number, nSplits: number, n: number): void {
    if (nSplits === 1) return;
    const combine = this.pipe({ kernel: 'attention_combine', wgSize: WG_ROW });
    this.rec.dispatch(combine, [null, this.partial, o.buffer], (p) => p.u(nHeads).u(headDim).u(nSplits).u(o.cols), [nHeads, n, 1]);
  }

  glu(out: Activation, gate: Activation, up: Activation, n: number, act: GluActivation): void {
    const [o, g, u] = [out, gate, up].map((a) => (a as GpuActivation).buffer) as [GPUBuffer, GPUBuffer, GPUBuffer];
    if (o === g && o === u) throw new LlmError('invalid-request', 'glu: out, gate and up are the same buffer');
    const entry = o === g ? 'main_out_gate' : o === u ? 'main_out_up' : 'main';
    const pipe = this.pipe({ kernel: 'glu', entry, wgSize: WG_FLAT, constants: { IS_GELU: act === 'gelu' }, tag: act });
    const count = n * out.cols;
    this.rec.dispatch(pipe, [null, g, u, o], (p) => p.u(count), grid(Math.ceil(count / WG_FLAT)));
  }

  add(out: Activation, a: Activation, b: Activation, n: number): void {
    const [o, ab, bb] = [out, a, b].map((x) => (x as GpuActivation).buffer) as [GPUBuffer, GPUBuffer, GPUBuffer];
    const count = n * out.cols;
    if (o === ab && o === bb) {
      this.scale(out, 2, n);
      return;
    }
    const entry = o === ab || o === bb ? 'main_out_a' : 'main';
    const other = o === ab ? bb : ab;
    const pipe = this.pipe({ kernel: 'add', entry, wgSize: WG_FLAT });
    this.rec.dispatch(pipe, entry === 'main' ? [null, ab, bb, o] : [null, null, other, o], (p) => p.u(count), grid(Math.ceil(count / WG_FLAT)));
  }

  scale(x: Activation, s: number, n: number): void {
    this.unary(x, s, n, false);
  }

  softcap(x: Activation, cap: number, n: number): void {
    this.unary(x, cap, n, true);
  }

  copyRows(out: Activation, x: Activation, srcRow: number, n: number): void {
    const o = out as GpuActivation;
    const xa = x as GpuActivation;
    const count = n * xa.cols;
    const same = o.buffer === xa.buffer;
    if (same && srcRow === 0) return;
    if (o.cols !== xa.cols || (same && srcRow < n)) {
      throw new LlmError('invalid-request', `copyRows: out (${o.cols} cols) and x (${xa.cols} cols) must match and not overlap (srcRow ${srcRow}, n ${n})`);
    }
    const pipe = this.pipe({ kernel: 'copy_rows', entry: same ? 'main_same' : 'main', wgSize: WG_FLAT });
    this.rec.dispatch(pipe, [null, same ? null : xa.buffer, o.buffer], (p) => p.u(count).u(srcRow * xa.cols), grid(Math.ceil(count / WG_FLAT)));
  }

  endStep(): void {
    this.step = null;
    this.scheduleFlush();
  }

  // ── results ──────────────────────────────────────────────────────────────────────────────────────────────────

  async read(x: Activation, n: number): Promise<Float32Array> {
    const xa = x as GpuActivation;
    return new Float32Array(await this.rec.read(xa.buffer, 0, n * xa.cols * 4));
  }

  async argmax(x: Activation, row: number): Promise<number> {
    const xa = x as GpuActivation;
    const pipe = this.pipe({ kernel: 'argmax', wgSize: WG_FLAT });
    this.rec.dispatch(pipe, [null, xa.buffer, this.result], (p) => p.u(row * xa.cols).u(xa.cols), [1, 1, 1]);
    return new Uint32Array(await this.rec.read(this.result, 0, 8))[0]!;
  }

  async topK(x: Activation, row: number, k: number): Promise<TopK> {
    const xa = x as GpuActivation;
    if (!Number.isInteger(k) || k < 1 || k > Math.min(MAX_TOP_K, xa.cols)) {
      throw new LlmError('invalid-request', `topK: k = ${k} must be an integer in 1 … ${Math.min(MAX_TOP_K, xa.cols)}`, { details: { k } });
    }
    const nChunks = Math.ceil(xa.cols / TOPK_CHUNK);
    const candBytes = nChunks * MAX_TOP_K * 8;
    if (!this.topkCand || this.topkCand.size < candBytes) {
      if (this.topkCand) this.release(this.topkCand);
      this.topkCand = this.buffer('topk-candidates', candBytes, 0);
    }
    const chunk = this.pipe({ kernel: 'topk_chunk', wgSize: WG_FLAT });
    this.rec.dispatch(chunk, [null, xa.buffer, this.topkCand], (p) => p.u(row * xa.cols).u(xa.cols).u(k), [nChunks, 1, 1]);
    const merge = this.pipe({ kernel: 'topk_merge', wgSize: WG_FLAT });
    this.rec.dispatch(merge, [null, this.topkCand, this.result], (p) => p.u(nChunks * k).u(k), [1, 1, 1]);
    const bytes = await this.rec.read(this.result, 0, 8 * k);
    return { ids: new Int32Array(bytes, 0, k).slice(), logits: new Float32Array(bytes, 4 * k, k).slice() };
  }

  copyKv(srcSlot: number, dstSlot: number, nPositions: number): void {
    const spec = this.requireKv('copyKv', 0);
    if (srcSlot === dstSlot || nPositions <= 0) return;
    if (Math.max(srcSlot, dstSlot) >= spec.nSlots || nPositions > spec.contextLength) {
      throw new LlmError('invalid-request', `copyKv: slots ${srcSlot}→${dstSlot} / ${nPositions} positions are outside the cache (${spec.nSlots} slots, context ${spec.contextLength})`);
    }
    const kvCols = spec.nKvHeads * spec.headDim;
    const count = nPositions * kvCols;
    const pipe = this.pipe({ kernel: 'copy_kv', wgSize: WG_FLAT });
    for (const l of this.kv) {
      this.rec.dispatch(pipe, [null, l.k, l.v], (p) => p.u(count).u(srcSlot * spec.contextLength * kvCols).u(dstSlot * spec.contextLength * kvCols), grid(Math.ceil(count / WG_FLAT)));
    }
    if (!this.step) this.scheduleFlush();
  }

  async readKv(slot: number, nPositions: number): Promise<KvRows> {
    const spec = this.requireKv('readKv', 0);
    const elementType = this.ctx.isF16 ? 'f16' : 'f32';
    checkKvRows('readKv', spec, slot, nPositions, elementType);
    const eb = elementType === 'f16' ? 2 : 4;
    const bytes = nPositions * spec.nKvHeads * spec.headDim * eb;
    const offset = slot * spec.contextLength * spec.nKvHeads * spec.headDim * eb;
    const padded = Math.ceil(bytes / 4) * 4; // copies are whole 4-byte words; the cache buffers are padded likewise
    const out = new Uint8Array(spec.nLayers * 2 * bytes);
    for (const [l, layer] of this.kv.entries()) {
      if (bytes === 0) break;
      out.set(new Uint8Array(await this.rec.read(layer.k, offset, padded), 0, bytes), 2 * l * bytes);
      out.set(new Uint8Array(await this.rec.read(layer.v, offset, padded), 0, bytes), (2 * l + 1) * bytes);
    }
    return { elementType, nPositions, data: out };
  }

  async writeKv(slot: number, rows: KvRows): Promise<void> {
    const spec = this.requireKv('writeKv', 0);
    const elementType = this.ctx.isF16 ? 'f16' : 'f32';
    checkKvRows('writeKv', spec, slot, rows.nPositions, elementType, rows);
    const eb = elementType === 'f16' ? 2 : 4;
    const bytes = rows.nPositions * spec.nKvHeads * spec.headDim * eb;
    const offset = slot * spec.contextLength * spec.nKvHeads * spec.headDim * eb;
    if (bytes === 0) return;
    this.rec.flush(); // recorded work first, then the writes, in queue order
    const padded = Math.ceil(bytes / 4) * 4;
    for (const [l, layer] of this.kv.entries()) {
      for (const [i, buf] of [layer.k, layer.v].entries()) {
        const chunk = new Uint8Array(padded);
        chunk.set(rows.data.subarray((2 * l + i) * bytes, (2 * l + i + 1) * bytes));
        if (padded !== bytes) chunk.set(new Uint8Array(await this.rec.read(buf, offset + padded - 4, 4)).subarray(bytes % 4), bytes);
        this.device.queue.writeBuffer(buf, offset, chunk);
      }
    }
  }

  destroy(): void {
    if (this.isDestroyed) return;
    this.isDestroyed = true;
    for (const b of this.buffers) b.destroy();
    this.buffers.clear();
    this.rec.destroy();
    if (this.ctx.ownsDevice) this.device.destroy();
  }

  // ── helpers ──────────────────────────────────────────────────────────────────────────────────────────────────

  private pipe(spec: Omit<PipelineSpec, 'quant'> & { quant?: GpuQuantLayout }): CachedPipeline {
    return this.pipes.get({ ...spec, quant: spec.quant ? { name: spec.quant.name, wgsl: spec.quant.wgsl } : undefined });
  }

  /**
   * Records out (+)= norm(x)·Wᵀ (+ bias) — or act(norm(x)·Wᵀ)·(norm(x)·upᵀ) with `glu` — through gemv_bcast, the
   * software-adapter decode kernel (subgroups, K a multiple of 32, n ≤ SOFTWARE_GEMV_MAX_N). Returns false, having
   * recorded nothing, where it does not apply (GPUs keep their kernels).
   */
  private bcast(o: GpuActivation, xa: GpuActivation, wt: GpuWeight, n: number, bias: Weight | null, norm: FusedNorm | null, accumulate: boolean, glu: { up: GpuWeight; act: GluActivation } | null): boolean {
    const k = wt.rowLength;
    if (!this.ctx.isSoftware || !this.ctx.isSubgroups || n > SOFTWARE_GEMV_MAX_N || wt.vector || k % BCAST_BLOCK !== 0 || xa.cols % 4 !== 0) return false;
    const nw = norm ? (norm.weight as GpuWeight) : null;
    if (nw && (nw.rowLength !== k || xa.cols !== k)) return false;
    const isGelu = glu?.act === 'gelu';
    const direct = GEMV_BCAST_DEBUG.forceDirect;
    const tag = [norm ? 'norm' : '', accumulate ? 'acc' : '', glu ? `glu_${glu.act}` : '', direct ? 'direct' : ''].filter((t) => t).join('_') || undefined;
    // Smaller workgroups for short matrices, so that even K/V projections (128 rows) spread over the CPU's threads.
    const wgSize = wt.nRows >= 2048 ? BCAST_WG : wt.nRows >= 256 ? BCAST_WG / 2 : BCAST_WG / 4;
    const pipe = this.pipes.get({
      kernel: 'gemv_bcast',
      quant: bcastQuantSource(wt.layout, glu !== null),
      wgSize,
      constants: { HAS_NORM: norm !== null, ACCUMULATE: accumulate, IS_GLU: glu !== null, IS_GELU: isGelu, FORCE_DIRECT: direct },
      tag,
    });
    const vec = (v: Weight | null): GPUBuffer => (v ? (v as GpuWeight).vector ?? (v as GpuWeight).parts[0]!.buffer : this.dummy);
    const eps = norm?.eps ?? 0;
    for (const part of wt.parts) {
      const upBuffer = glu ? glu.up.parts[0]!.buffer : this.dummy;
      this.rec.dispatch(
        pipe,
        [null, part.buffer, xa.buffer, o.buffer, vec(bias), vec(nw), upBuffer, part.buffer, upBuffer], // weights, up: u32 and vec4 views
        (p) => p.u(k).u(part.nRows).u(wt.rowStride).u(xa.cols).u(o.cols).u(part.rowStart).u(bias ? 1 : 0).f(eps),
        grid(Math.ceil(part.nRows / (2 * wgSize)), n), // two rows per invocation
      );
    }
    return true;
  }

  /** Which matrix kernel runs x[n, k] · Wᵀ (see matmul). */
  private gemvKind(k: number, n: number): 'gemm' | 'gemv' | 'gemv_rows' | 'gemv_sg' {
    if (n > 1 && !(this.ctx.isSoftware && n <= SOFTWARE_GEMV_MAX_N)) return 'gemm';
    if (k <= GEMV_ROWS_MAX_K) return 'gemv_rows';
    if (this.ctx.isSubgroups) return 'gemv_sg';
    return this.ctx.isSoftware ? 'gemv_rows' : 'gemv';
  }

  private unary(x: Activation, s: number, n: number, isSoftcap: boolean): void {
    const count = n * x.cols;
    const pipe = this.pipe({ kernel: 'scale', wgSize: WG_FLAT, constants: { IS_SOFTCAP: isSoftcap }, tag: isSoftcap ? 'softcap' : undefined });
    this.rec.dispatch(pipe, [null, (x as GpuActivation).buffer], (p) => p.u(count).f(s), grid(Math.ceil(count / WG_FLAT)));
  }

  private buffer(label: string, size: number, extraUsage: number): GPUBuffer {
    const b = this.device.createBuffer({ label, size: Math.max(16, Math.ceil(size / 4) * 4), usage: BufferUsage.STORAGE | extraUsage });
    this.buffers.add(b);
    return b;
  }

  private release(b: GPUBuffer): void {
    this.flushNow();
    this.buffers.delete(b);
    b.destroy();
  }

  private requireStep(op: string): { startPos: number; slot: number; n: number } {
    if (!this.step) throw new LlmError('invalid-request', `${op} called outside beginStep … endStep`);
    return this.step;
  }

  private requireKv(op: string, layer: number): KvCacheSpec {
    if (!this.kvSpec || layer < 0 || layer >= this.kv.length) {
      throw new LlmError('invalid-request', `${op}: no KV cache for layer ${layer}; call createKvCache first`);
    }
    return this.kvSpec;
  }

  /** Inverse frequencies theta^(−2i/nRot) / freqFactors[i], computed in f64, cached per parameter set. */
  private ropeTable(params: RopeParams): GPUBuffer {
    let ffId = 0;
    if (params.freqFactors) {
      ffId = this.arrayIds.get(params.freqFactors) ?? ++this.nextArrayId;
      this.arrayIds.set(params.freqFactors, ffId);
    }
    const key = `${params.theta}|${params.nRot}|${ffId}`;
    let table = this.ropeTables.get(key);
    if (!table) {
      const inv = ropeInverseFrequencies(params);
      table = this.buffer(`rope-inv-freq.${key}`, inv.byteLength, BufferUsage.COPY_DST);
      this.device.queue.writeBuffer(table, 0, inv);
      this.ropeTables.set(key, table);
    }
    return table;
  }

  /**
   * Submits recorded work soon, unless something forces it first: the next `beginStep`, or a read (which then
   * rides in the same submission — a decode step's forward pass and its argmax are one submit). A macrotask, not
   * a microtask, so that `await model.eval(); await model.argmax()` still lands in the same command buffer.
   */
  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setTimeout(() => {
      this.flushScheduled = false;
      if (!this.step && !this.isDestroyed) this.rec.flush();
    }, 0);
  }

  private flushNow(): void {
    if (this.rec.hasPending) this.rec.flush();
  }
}
