/**
 * The WebGPU implementation of `Ops`: weights repacked into aligned storage buffers, static activations and KV
 * cache, and every op recorded as one dispatch (a few for split weights and attention) into the step's single
 * command submission. Reads (read/argmax/topK) append their copy to the pending work and map a pooled buffer.
 * This class owns the device, buffers, step state and flushing, and runs the matrix products' kernel choice; the
 * rest is delegated to one helper per concept, each given the same narrow host object: activation-ops (embed,
 * norms, RoPE, elementwise), hardware-gemv / software-gemv (decode GEMVs), kv-cache-ops, attention-ops,
 * sampling-ops, rope-table-cache, weight-upload and profile-session.
 */

import { BufferUsage } from './gpu-flags.js';
import { LlmError } from '../../errors.js';
import type {
  Activation,
  AttentionParams,
  FusedMatmulOptions,
  FusedNorm,
  GluActivation,
  GluScratch,
  KvCacheSpec,
  MoeRouteParams,
  Ops,
  RecurrentStateSpec,
  DeltaNetInputs,
  DeltaNetWeights,
} from '../ops.js';
import type {
  KvRows,
  Projection,
  ResidualOptions,
  RopeParams,
  StepBatch,
  TopK,
  Weight,
  WeightInfo,
  WeightStream,
} from '../ops.js';
import { CompositeOps } from '../composite-ops.js';
import { checkAttentionGeometry } from '../kv-rows.js';
import type { KvShift } from '../kv-shift.js';
import type { KvType } from '../kv-type.js';
import type { GpuContext } from './device.js';
import { watchDevice } from './device.js';
import { ActivationOps } from './activation-ops.js';
import { MoeOps } from './moe-ops.js';
import { AttentionOps } from './attention-ops.js';
import { KvCacheOps } from './kv-cache-ops.js';
import { type CachedPipeline, PipelineCache, type PipelineSpec } from './pipelines.js';
import { RopeTableCache } from './rope-table-cache.js';
import { RecurrentStateOps } from './recurrent-state-ops.js';
import { DeltaNetOps } from './delta-net-ops.js';
import { SamplingOps } from './sampling-ops.js';
import { SoftwareGemv } from './software-gemv.js';
import { MatmulOps } from './matmul-ops.js';
import { PARAMS_BYTES, type RecorderStats, StepRecorder } from './step-recorder.js';
import type { WeightGroupSlot } from './weight-groups.js';
import { beginGpuWeight, uploadGpuWeight, type WeightUploadHost } from './weight-upload.js';
import type { StepProfile } from './profile.js';
import { ProfileSession } from './profile-session.js';
import { HardwareGemv } from './hardware-gemv.js';
import type { GpuActivation, GpuWeight } from './gpu-resources.js';
import type { GpuQuantLayout } from './upload.js';

/** Longest row for which decode uses one row per invocation (gemv_rows) instead of a workgroup per row. */
export class WebGpuOps extends CompositeOps implements Ops {
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
  private step: { startPos: number; slot: number; n: number } | null = null;
  private flushScheduled = false;
  private isDestroyed = false;
  private readonly profile: ProfileSession;
  private readonly uploadHost: WeightUploadHost;
  private readonly dummyRw: [GPUBuffer, GPUBuffer]; // unused read-write bindings of gemv_sg
  private readonly acts: ActivationOps; // embed, norms, RoPE and elementwise ops
  private readonly moe: MoeOps; // mixture-of-experts routing, gather matmul and sums
  private readonly hw: HardwareGemv; // decode GEMV of the hardware kernel set
  private readonly sw: SoftwareGemv; // gemv_bcast of software adapters
  private readonly mm: MatmulOps; // picks gemv_bcast, the hardware GEMV, gemv_rows or gemm per matmul
  private readonly kvc: KvCacheOps; // per layer (nSlots, contextLength, nKvHeads·headDim) K and V
  private readonly attn: AttentionOps; // owns the (rows, nHeads, splits, headDim + 2) f32 split-K scratch
  private readonly ropeTables: RopeTableCache; // (nRot/2) f32 inverse frequencies per parameter set
  private readonly recurrent: RecurrentStateOps; // (nSlots, Σ layer sizes) f32 short-convolution state
  private readonly dn: DeltaNetOps; // qwen35's DeltaNet and gated-attention dispatches
  /** The small vectors of each DeltaNet layer's weights as the kernels bind them. */
  private readonly deltaNetVectors = new WeakMap<DeltaNetWeights, Parameters<DeltaNetOps['deltaNet']>[5]>();
  private readonly sampling: SamplingOps; // owns the (2·MAX_TOP_K) u32 result and top-k candidate buffers

  constructor(private readonly ctx: GpuContext) {
    super();
    this.device = ctx.device;
    this.maxBinding = Math.min(ctx.device.limits.maxStorageBufferBindingSize, ctx.device.limits.maxBufferSize);
    this.maxWeightBinding = ctx.maxBindingBytes;
    this.pipes = new PipelineCache(ctx.device, ctx.isF16 ? 'f16' : 'f32', ctx.isSubgroups, PARAMS_BYTES);
    this.rec = new StepRecorder(ctx.device);
    this.profile = new ProfileSession(this.rec);
    this.description =
      `webgpu ${ctx.isF16 ? 'f16' : 'f32'} ${ctx.isSubgroups ? 'subgroups' : 'shared-memory'}` +
      `${ctx.isSoftware ? ' software' : ''} (${ctx.adapterDescription})`;
    this.dummy = this.buffer('dummy', 16, 0);
    this.dummyRw = [this.buffer('dummy-rw1', 16, 0), this.buffer('dummy-rw2', 16, 0)];
    // One host object for the helpers, built once: their per-token calls allocate nothing here.
    const host = {
      ctx,
      device: this.device,
      rec: this.rec,
      pipes: this.pipes,
      maxBinding: this.maxBinding,
      maxWeightBinding: this.maxWeightBinding,
      dummy: this.dummy,
      dummyRw: this.dummyRw,
      pipe: (spec: Omit<PipelineSpec, 'quant'> & { quant?: GpuQuantLayout }) => this.pipe(spec),
      buffer: (label: string, size: number, usage: number) => this.buffer(label, size, usage),
      release: (b: GPUBuffer) => this.release(b),
      vec: (w: Weight) => this.vec(w),
      profileMatmul: (
        kernel: string,
        ws: readonly GpuWeight[],
        nRows: number,
        n: number,
        groups: readonly number[],
        wgSize: number,
        reads: number,
      ) => this.profile.matmul(kernel, ws, nRows, n, groups, wgSize, reads),
      profiler: () => this.profile.collector,
      stash: (slot: WeightGroupSlot, w: GpuWeight, bytes: Uint8Array) => this.hw.stash(slot, w, bytes),
      ropeTable: (params: RopeParams) => this.ropeTables.get(params),
    };
    this.uploadHost = host;
    this.acts = new ActivationOps(host);
    this.moe = new MoeOps(host);
    this.hw = new HardwareGemv(host);
    this.sw = new SoftwareGemv(host);
    this.mm = new MatmulOps(host, this.hw, this.sw);
    this.kvc = new KvCacheOps(host);
    this.attn = new AttentionOps(host);
    this.ropeTables = new RopeTableCache(host);
    this.tokens = this.buffer('tokens', this.tokenCapacity * 4, BufferUsage.COPY_DST);
    this.sampling = new SamplingOps(host); // allocates the result buffer
    this.recurrent = new RecurrentStateOps(host);
    this.dn = new DeltaNetOps(host, this.recurrent);
    watchDevice(ctx.device, (reason) => {
      if (!this.isDestroyed) this.rec.markLost(reason);
    });
  }

  /** Dispatch / submission / readback counters since creation. */
  get stats(): Readonly<RecorderStats> {
    return this.rec.stats;
  }

  /** Which kernel set runs: the one chosen for GPUs ('hardware') or for CPU implementations ('software'). */
  get kernelSet(): 'hardware' | 'software' {
    return this.ctx.isSoftware ? 'software' : 'hardware';
  }

  /** Starts a structural profile of the work recorded from now on (see profile.ts). */
  beginProfile(): void {
    this.flushNow();
    this.profile.begin();
  }

  /** Ends the profile begun by `beginProfile` (its work must have been submitted and read back). */
  endProfile(layers: number, tokens: number): StepProfile {
    return this.profile.end(layers, tokens);
  }

  /** Pipelines built so far. */
  get pipelineCount(): number {
    return this.pipes.size;
  }

  /** What the memory plan needs: the device's buffer limits and the KV element size (2 on the f16 path). */
  get memoryLimits(): {
    readonly maxStorageBufferBindingSize: number;
    readonly maxBufferSize: number;
    readonly kvBytesPerElement: 2 | 4;
  } {
    const l = this.device.limits;
    return {
      maxStorageBufferBindingSize: l.maxStorageBufferBindingSize,
      maxBufferSize: l.maxBufferSize,
      kvBytesPerElement: this.ctx.isF16 ? 2 : 4,
    };
  }

  // ── memory ───────────────────────────────────────────────────────────────────────────────────────────────────

  uploadWeight(info: WeightInfo, data: Uint8Array, signal?: AbortSignal): Promise<Weight> {
    return uploadGpuWeight(this.uploadHost, info, data, signal);
  }

  beginWeight(info: WeightInfo): WeightStream {
    return beginGpuWeight(this.uploadHost, info);
  }

  createActivation(label: string, maxRows: number, cols: number): Activation {
    const bytes = maxRows * cols * 4;
    if (bytes > this.maxBinding) {
      throw new LlmError(
        'out-of-memory',
        `creating activation ${label} [${maxRows}, ${cols}]: ${bytes} bytes is over the device's storage binding limit of ${this.maxBinding}; use a smaller batch (ubatch) size`,
        {
          details: { label, maxRows, cols, bytes, maxStorageBufferBindingSize: this.maxBinding },
        },
      );
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

  createKvCache(spec: KvCacheSpec): KvType {
    this.hw.commitPending();
    this.flushNow();
    this.kvc.create(spec);
    return this.ctx.isF16 ? 'f16' : 'f32';
  }

  // ── step ─────────────────────────────────────────────────────────────────────────────────────────────────────

  beginStep(batch: StepBatch): void {
    this.rec.checkAlive();
    if (this.hw.hasPendingGroups) this.hw.commitPending();
    this.flushNow(); // the token write must come after every previously recorded dispatch
    const n = batch.tokens.length;
    if (n > this.tokenCapacity) {
      throw new LlmError(
        'invalid-request',
        `beginStep: ${n} tokens exceed the largest activation (${this.tokenCapacity} rows); split the batch`,
        {
          details: { tokens: n, maxRows: this.tokenCapacity },
        },
      );
    }
    if (n > 0) this.device.queue.writeBuffer(this.tokens, 0, batch.tokens.buffer, batch.tokens.byteOffset, n * 4);
    this.step = { startPos: batch.startPos, slot: batch.slot, n };
  }

  setSequence(slot: number, startPos: number): void {
    this.step = { startPos, slot, n: this.requireStep('setSequence').n };
  }

  embed(out: Activation, table: Weight, n: number): void {
    this.acts.embed(out, table, n, this.tokens);
  }

  rmsNorm(out: Activation, x: Activation, weight: Weight | null, eps: number, n: number, groupSize?: number): void {
    this.acts.rmsNorm(out, x, weight, eps, n, groupSize);
  }

  matmul(out: Activation, x: Activation, w: Weight, n: number, bias?: Weight | null): void {
    this.mm.matmul(out, x, w, n, bias ?? null);
  }

  matmulFused(out: Activation, x: Activation, w: Weight, n: number, options: FusedMatmulOptions): boolean {
    return this.mm.fused(out, x, w, n, options.bias ?? null, options.norm ?? null, options.accumulate === true);
  }

  matmulGlu(
    out: Activation,
    x: Activation,
    gate: Weight,
    up: Weight,
    n: number,
    act: GluActivation,
    norm: FusedNorm | null,
  ): boolean {
    return this.mm.glu(out, x, gate, up, n, act, norm);
  }

  // Compound steps: the fused kernels where they apply (gemv_bcast on software adapters; the hardware GEMV with its
  // Q|K|V and gate|up groups on GPUs), else the shared composition.
  override normMatmul(
    normed: Activation,
    x: Activation,
    norm: FusedNorm | null,
    projections: readonly Projection[],
    n: number,
  ): void {
    let isNormed = false;
    for (let i = 0; i < projections.length; i++) {
      const p = projections[i]!;
      if (this.mm.fused(p.out, x, p.weight, n, p.bias, norm, false)) continue;
      if (norm && !isNormed) this.rmsNorm(normed, x, norm.weight, norm.eps, n);
      isNormed = true;
      this.matmul(p.out, norm ? normed : x, p.weight, n, p.bias);
    }
  }

  override matmulResidual(x: Activation, input: Activation, w: Weight, n: number, options: ResidualOptions): void {
    if (options.postNorm || options.scale !== 1 || !this.mm.fused(x, input, w, n, options.bias, null, true)) {
      super.matmulResidual(x, input, w, n, options);
    }
  }

  override gatedFfn(
    out: Activation,
    x: Activation,
    norm: FusedNorm | null,
    gate: Weight,
    up: Weight,
    n: number,
    act: GluActivation,
    scratch: GluScratch,
  ): void {
    if (!this.matmulGlu(out, x, gate, up, n, act, norm)) super.gatedFfn(out, x, norm, gate, up, n, act, scratch);
  }

  rope(x: Activation, n: number, params: RopeParams): void {
    this.acts.rope(this.requireStep('rope'), x, n, params);
  }

  override ropeStoreKv(
    layer: number,
    q: Activation,
    k: Activation,
    v: Activation,
    n: number,
    params: RopeParams,
  ): boolean {
    const st = this.requireStep('ropeStoreKv');
    if (!this.kvc.ropeStore(st, layer, q as GpuActivation, k as GpuActivation, v as GpuActivation, n, params)) {
      super.ropeStoreKv(layer, q, k, v, n, params); // not fusable (or aliased buffers): the three ops
    }
    return true;
  }

  storeKv(layer: number, k: Activation, v: Activation, n: number): void {
    this.kvc.store(this.requireStep('storeKv'), layer, k as GpuActivation, v as GpuActivation, n);
  }

  attention(out: Activation, q: Activation, layer: number, n: number, params: AttentionParams): void {
    const st = this.requireStep('attention');
    const spec = this.kvc.require('attention', layer);
    checkAttentionGeometry(spec, layer, params);
    this.attn.attention(st, spec, this.kvc.layer(layer), out as GpuActivation, q as GpuActivation, n, params);
  }

  glu(out: Activation, gate: Activation, up: Activation, n: number, act: GluActivation): void {
    this.acts.glu(out, gate, up, n, act);
  }

  layerNorm(out: Activation, x: Activation, weight: Weight | null, bias: Weight | null, eps: number, n: number): void {
    this.acts.layerNorm(out, x, weight, bias, eps, n);
  }

  gelu(x: Activation, n: number): void {
    this.acts.gelu(x, n);
  }

  add(out: Activation, a: Activation, b: Activation, n: number): void {
    this.acts.add(out, a, b, n);
  }

  moeRoute(ids: Activation, weights: Activation, logits: Activation, n: number, params: MoeRouteParams): void {
    this.moe.route(ids, weights, logits, n, params);
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
    this.moe.matmulExperts(out, x, w, nExperts, ids, n, xPerSlot);
  }

  moeCombine(out: Activation, y: Activation, weights: Activation, n: number): void {
    this.moe.combine(out, y, weights, n);
  }

  sigmoidGatedAdd(out: Activation, y: Activation, gate: Activation, n: number): void {
    this.moe.sigmoidGatedAdd(out, y, gate, n);
  }

  scale(x: Activation, s: number, n: number): void {
    this.acts.scale(x, s, n);
  }

  softcap(x: Activation, cap: number, n: number): void {
    this.acts.softcap(x, cap, n);
  }

  copyRows(out: Activation, x: Activation, srcRow: number, n: number, dstRow = 0): void {
    this.acts.copyRows(out, x, srcRow, n, dstRow);
  }

  endStep(): void {
    this.hw.settle();
    this.step = null;
    this.scheduleFlush();
  }

  // ── results ──────────────────────────────────────────────────────────────────────────────────────────────────

  async read(x: Activation, n: number): Promise<Float32Array> {
    this.hw.settle();
    const xa = x as GpuActivation;
    return new Float32Array(await this.rec.read(xa.buffer, 0, n * xa.cols * 4));
  }

  argmax(x: Activation, row: number): Promise<number> {
    return this.sampling.argmax(x as GpuActivation, row);
  }

  topK(x: Activation, row: number, k: number): Promise<TopK> {
    return this.sampling.topK(x as GpuActivation, row, k);
  }

  shortConv(out: Activation, bcx: Activation, layer: number, n: number, kernel: Weight): void {
    const st = this.requireStep('shortConv');
    this.recurrent.shortConv(
      st,
      out as GpuActivation,
      bcx as GpuActivation,
      layer,
      n,
      this.vec(kernel),
      kernel.rowLength,
      kernel.nRows,
    );
  }

  deltaNet(out: Activation, x: DeltaNetInputs, layer: number, n: number, w: DeltaNetWeights, eps: number): void {
    const st = this.requireStep('deltaNet');
    let small = this.deltaNetVectors.get(w); // built once per layer's weights, not per token
    if (!small) {
      const vec = (v: Weight): GPUBuffer => this.vec(v);
      small = { dims: w.dims, conv: vec(w.conv), dtBias: vec(w.dtBias), a: vec(w.a), norm: vec(w.norm) };
      this.deltaNetVectors.set(w, small);
    }
    this.dn.deltaNet(st, out as GpuActivation, x, layer, n, small, eps);
  }

  splitHeadPairs(q: Activation, gate: Activation, qg: Activation, n: number, headDim: number): void {
    this.requireStep('splitHeadPairs');
    this.dn.splitHeadPairs(q as GpuActivation, gate as GpuActivation, qg as GpuActivation, n, headDim);
  }

  mulSigmoid(x: Activation, gate: Activation, n: number): void {
    this.requireStep('mulSigmoid');
    this.dn.mulSigmoid(x as GpuActivation, gate as GpuActivation, n);
  }

  createRecurrentState(spec: RecurrentStateSpec): void {
    this.recurrent.create(spec);
  }

  copyRecurrentState(srcSlot: number, dstSlot: number): void {
    if (this.recurrent.copy(srcSlot, dstSlot) && !this.step) this.scheduleFlush();
  }

  readRecurrentState(slot: number): Promise<Float32Array> {
    this.hw.settle();
    return this.recurrent.read(slot);
  }

  writeRecurrentState(slot: number, state: Float32Array): void {
    this.hw.settle();
    this.recurrent.write(slot, state);
  }

  copyKv(srcSlot: number, dstSlot: number, nPositions: number): void {
    if (this.kvc.copy(srcSlot, dstSlot, nPositions) && !this.step) this.scheduleFlush();
  }

  shiftKv(slot: number, shift: KvShift): Promise<void> {
    return this.kvc.shift(slot, shift);
  }

  readKv(slot: number, nPositions: number): Promise<KvRows> {
    return this.kvc.read(slot, nPositions);
  }

  writeKv(slot: number, rows: KvRows): Promise<void> {
    return this.kvc.write(slot, rows);
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

  /** The f32 buffer of a 1-D weight. */
  private vec(w: Weight): GPUBuffer {
    const g = w as GpuWeight;
    return g.vector ?? (g.parts[0]!.buffer as GPUBuffer);
  }

  private pipe(spec: Omit<PipelineSpec, 'quant'> & { quant?: GpuQuantLayout }): CachedPipeline {
    this.hw.settle();
    return this.pipes.get({
      ...spec,
      quant: spec.quant ? { name: spec.quant.name, wgsl: spec.quant.wgsl } : undefined,
    });
  }

  private buffer(label: string, size: number, extraUsage: number): GPUBuffer {
    const b = this.device.createBuffer({
      label,
      size: Math.max(16, Math.ceil(size / 4) * 4),
      usage: BufferUsage.STORAGE | extraUsage,
    });
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
    this.hw.settle();
    if (this.rec.hasPending) this.rec.flush();
  }
}
