/**
 * The WebGPU implementation of `Ops`: weights repacked into aligned storage buffers, static activations and KV
 * cache, and every op recorded as one dispatch (a few for split weights and attention) into the step's single
 * command submission. Reads (read/argmax/topK) append their copy to the pending work and map a pooled buffer.
 * This class owns the device, buffers, step state and flushing, and runs the matrix products' kernel choice; the
 * rest is delegated to one helper per concept, each given the same narrow host object: activation-ops (embed,
 * norms, RoPE, elementwise), hardware-gemv / software-gemv (decode GEMVs), kv-cache-ops, attention-ops,
 * sampling-ops, rope-table-cache, token-input, weight-upload and profile-session. The other layer kinds' ops (MoE,
 * short convolution, DeltaNet, Mamba-2, recurrent state) are delegated by the base class in layer-kind-ops.ts.
 */

import { BufferUsage } from './gpu-flags.js';
import { LlmError } from '../../errors.js';
import type { Activation, AttentionParams, FusedMatmulOptions } from '../ops.js';
import type { FusedNorm, GluActivation, GluScratch, KvCacheSpec, KvRows, Ops } from '../ops.js';
import type { Projection, ResidualOptions, RopeParams, StepBatch, TopK } from '../ops.js';
import type { Weight, WeightInfo, WeightStream } from '../ops.js';
import { WebGpuLayerKindOps } from './layer-kind-ops.js';
import { checkAttentionGeometry } from '../kv-rows.js';
import { checkRows } from '../set-rows.js';
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
import { RopePositions } from './rope-positions.js';
import { RecurrentStateOps, type RecurrentStep } from './recurrent-state-ops.js';
import { AltUpOps } from './altup-ops.js';
import { DeltaNetOps } from './delta-net-ops.js';
import { Mamba2Ops } from './mamba2-ops.js';
import { SamplingOps } from './sampling-ops.js';
import { SoftwareGemv } from './software-gemv.js';
import { MatmulOps } from './matmul-ops.js';
import { PARAMS_BYTES, type RecorderStats, StepRecorder } from './step-recorder.js';
import { loadFeatureShaders } from './compose.js';
import type { WeightGroupSlot } from './weight-groups.js';
import { beginGpuWeight, uploadGpuWeight, type WeightUploadHost } from './weight-upload.js';
import type { StepProfile } from './profile.js';
import { ProfileSession } from './profile-session.js';
import { HardwareGemv } from './hardware-gemv.js';
import { TokenInput } from './token-input.js';
import type { GpuActivation, GpuWeight } from './gpu-resources.js';
import type { GpuQuantLayout } from './upload.js';

/** See the file header. */
export class WebGpuOps extends WebGpuLayerKindOps implements Ops {
  readonly name = 'webgpu';
  readonly description: string;
  private readonly device: GPUDevice;
  private readonly pipes: PipelineCache;
  private readonly rec: StepRecorder;
  private readonly maxBinding: number;
  private readonly maxWeightBinding: number;
  private readonly buffers = new Set<GPUBuffer>();
  private readonly dummy: GPUBuffer; // (4) f32 zeros, bound where a binding is unused
  private readonly tokens: TokenInput; // (rows of the largest activation) i32 token ids of the step
  private step: RecurrentStep | null = null;
  private flushScheduled = false;
  private isDestroyed = false;
  private readonly profile: ProfileSession;
  private readonly uploadHost: WeightUploadHost;
  private readonly dummyRw: [GPUBuffer, GPUBuffer]; // unused read-write bindings of gemv_sg
  private readonly acts: ActivationOps; // embed, norms, RoPE and elementwise ops
  protected readonly moe: MoeOps; // mixture-of-experts routing, gather matmul and sums
  private readonly hw: HardwareGemv; // decode GEMV of the hardware kernel set
  private readonly sw: SoftwareGemv; // gemv_bcast of software adapters
  private readonly mm: MatmulOps; // picks gemv_bcast, the hardware GEMV, gemv_rows or gemm per matmul
  private readonly kvc: KvCacheOps; // per layer (nSlots, contextLength, nKvHeads·headDim) K and V
  private readonly attn: AttentionOps; // owns the (rows, nHeads, splits, headDim + 2) f32 split-K scratch
  private readonly ropeTables: RopeTableCache; // (nRot/2) f32 inverse frequencies per parameter set
  private readonly ropePos: RopePositions; // (4, n) i32 multi-stream rope positions of an image step
  protected readonly recurrent: RecurrentStateOps; // (nSlots, Σ layer sizes) f32 short-convolution state
  protected readonly dn: DeltaNetOps; // qwen35's DeltaNet and gated-attention dispatches
  readonly altUp: AltUpOps; // gemma3n's AltUp and sparsity primitives
  protected readonly m2: Mamba2Ops; // granitehybrid's Mamba-2 dispatches
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
    this.ropePos = new RopePositions({
      device: this.device,
      buffer: this.buffer.bind(this),
      release: this.release.bind(this),
    });
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
      profileMatmul: this.profile.matmul.bind(this.profile),
      profiler: () => this.profile.collector,
      stash: (slot: WeightGroupSlot, w: GpuWeight, bytes: Uint8Array) => this.hw.stash(slot, w, bytes),
      ropeTable: (params: RopeParams) => this.ropeTables.get(params),
      ropePositions: this.ropePos,
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
    this.tokens = new TokenInput(host);
    this.sampling = new SamplingOps(host); // allocates the result buffer
    this.recurrent = new RecurrentStateOps(host);
    this.dn = new DeltaNetOps(host, this.recurrent);
    this.altUp = new AltUpOps(host);
    this.m2 = new Mamba2Ops(host, this.recurrent, (w) => this.vec(w));
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
    this.tokens.ensure(maxRows);
    const a: GpuActivation = { label, maxRows, cols, buffer };
    return a;
  }

  createKvCache(spec: KvCacheSpec): KvType {
    this.hw.commitPending();
    this.flushNow();
    this.kvc.create(spec);
    return this.ctx.isF16 ? 'f16' : 'f32';
  }

  beginStep(batch: StepBatch): void {
    this.rec.checkAlive();
    if (this.hw.hasPendingGroups) this.hw.commitPending();
    this.flushNow(); // the token write must come after every previously recorded dispatch
    this.ropePos.begin(batch.positions); // [4, n] multi-stream rope positions (images), else none
    if (batch.tokensOnDevice !== true) this.tokens.write(batch.tokens);
    else if (batch.tokens.length !== 1) {
      throw new LlmError(
        'invalid-request',
        `beginStep: a step whose token is on the device has 1 token, not ${batch.tokens.length}`,
      );
    }
    this.step = { startPos: batch.startPos, slot: batch.slot, n: batch.tokens.length, sequences: batch.sequences };
  }

  setSequence(slot: number, startPos: number, positions?: Int32Array): void {
    this.ropePos.select(positions); // [4, n] one sequence's streams after the step's others, else its KV positions
    this.step = { ...this.requireStep('setSequence'), startPos, slot }; // keeps n and the step's sequences
  }

  embed(out: Activation, table: Weight, n: number): void {
    this.acts.embed(out, table, n, this.tokens.buffer);
  }

  setRows(out: Activation, rows: Float32Array, n: number): void {
    checkRows(out, rows, n);
    this.flushNow(); // the write lands after every dispatch recorded before it
    this.device.queue.writeBuffer((out as GpuActivation).buffer, 0, rows.buffer, rows.byteOffset, n * out.cols * 4);
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

  scale(x: Activation, s: number, n: number): void {
    this.acts.scale(x, s, n);
  }

  softcap(x: Activation, cap: number, n: number): void {
    this.acts.softcap(x, cap, n);
  }

  clamp(x: Activation, lo: number, hi: number, n: number): void {
    this.acts.clamp(x, lo, hi, n);
  }

  copyRows(out: Activation, x: Activation, srcRow: number, n: number, dstRow = 0): void {
    this.acts.copyRows(out, x, srcRow, n, dstRow);
  }

  endStep(): void {
    this.hw.settle();
    this.step = null;
    this.scheduleFlush();
  }

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

  loadFeatureKernels(): Promise<void> {
    return loadFeatureShaders();
  }

  async preparePipelines(record: () => Promise<void>): Promise<void> {
    if (this.hw.hasPendingGroups) this.hw.commitPending();
    this.flushNow();
    this.rec.discarding = true;
    try {
      await record();
      this.hw.settle();
    } finally {
      this.rec.discarding = false;
      this.step = null;
    }
    await this.pipes.buildPending();
  }

  argmaxToInput(x: Activation, row: number): Promise<number> {
    return this.sampling.argmax(x as GpuActivation, row, this.tokens.buffer);
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

  /** The f32 buffer of a 1-D weight. */
  private vec(w: Weight): GPUBuffer {
    const g = w as GpuWeight;
    return g.vector ?? (g.parts[0]!.buffer as GPUBuffer);
  }

  private pipe(spec: Omit<PipelineSpec, 'quant'> & { quant?: GpuQuantLayout }): CachedPipeline {
    this.hw.settle();
    return this.pipes.get(spec); // a GpuQuantLayout carries the snippet's name and WGSL
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

  protected requireStep(op: string): RecurrentStep {
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

  protected settle(): void {
    this.hw.settle();
  }

  protected flushIfIdle(): void {
    if (!this.step) this.scheduleFlush();
  }

  private flushNow(): void {
    this.hw.settle();
    if (this.rec.hasPending) this.rec.flush();
  }
}
