/**
 * Records a step's dispatches into one command encoder and submits them once. Per-dispatch parameters go to a
 * params arena: each dispatch takes the next slot of a CPU staging copy, and the used range is written with one
 * `writeBuffer` just before the submit, so the uniform block is bound with a dynamic offset and bind groups are
 * cached by (pipeline, buffers) alone — in a tree of maps keyed by the pipeline, then each binding's buffer and
 * offset, so a recorded step looks its bind groups up without building a key (nothing allocated per dispatch once
 * the step's bind groups exist). Also the readback pool, counters, and device-lost rejection of pending reads.
 */

import { BufferUsage, MAP_MODE_READ } from './gpu-flags.js';
import { LlmError } from '../../errors.js';
import type { CachedPipeline } from './pipelines.js';

/** Bytes of one dispatch's uniform block (every kernel's Params struct fits). */
export const PARAMS_BYTES = 128;

/** A range of a buffer bound to one binding (offset a multiple of minStorageBufferOffsetAlignment). */
interface BufferRange {
  readonly buffer: GPUBuffer;
  readonly offset: number;
  readonly size: number;
}

/** What a binding is given: a whole buffer or a range of one. */
export type Binding = GPUBuffer | BufferRange;

/** True for a BufferRange. */
function isRange(b: Binding): b is BufferRange {
  return (b as Partial<BufferRange>).offset !== undefined && (b as Partial<BufferRange>).buffer !== undefined;
}
/** One node of the bind-group tree: the group of the bindings walked so far, and the next binding's buffers. */
interface BindNode {
  group: GPUBindGroup | null;
  /** Next binding: by buffer, then by offset (−1 = the whole buffer). */
  readonly next: Map<GPUBuffer, Map<number, BindNode>>;
}

/** An empty tree node. */
function bindNode(): BindNode {
  return { group: null, next: new Map() };
}

/** Slots in the params arena; a step needing more is split into several submissions. */
const ARENA_SLOTS = 2048;

/** Counters for benchmarks. */
export interface RecorderStats {
  dispatches: number;
  submissions: number;
  bytesRead: number;
  /** Host writes of a step's token ids (none for steps whose token the previous argmax wrote on the device). */
  tokenWrites: number;
}

/** Writes one dispatch's uniform block as a run of 32-bit fields (Params struct order). */
export class ParamsWriter {
  private i = 0;
  private base = 0;
  constructor(
    private readonly u32: Uint32Array,
    private readonly f32: Float32Array,
  ) {}
  /** Starts a dispatch's block at word `base` (one writer serves every dispatch: nothing allocated per dispatch). */
  at(base: number): this {
    this.base = base;
    this.i = 0;
    return this;
  }
  u(v: number): this {
    this.u32[this.base + this.i++] = v >>> 0;
    return this;
  }
  f(v: number): this {
    this.f32[this.base + this.i++] = v;
    return this;
  }
}

/** Largest workgroup count per dimension that WebGPU guarantees. */
const MAX_GROUPS = 65535;

/** A 2-D grid of at least `groups` workgroups (kernels rebuild the linear id as wg.y·nwg.x + wg.x). */
export function grid(groups: number, z = 1): [number, number, number] {
  const gx = Math.max(1, Math.min(groups, MAX_GROUPS));
  return [gx, Math.max(1, Math.ceil(groups / gx)), z];
}

/** Records, submits and reads back. One per backend instance. */
export class StepRecorder {
  readonly stats: RecorderStats = { dispatches: 0, submissions: 0, bytesRead: 0, tokenWrites: 0 };
  private encoder: GPUCommandEncoder | null = null;
  private pass: GPUComputePassEncoder | null = null;
  private readonly slotBytes: number;
  private readonly staging: ArrayBuffer;
  private readonly stagingU32: Uint32Array;
  private readonly stagingF32: Float32Array;
  private readonly params: ParamsWriter; // writes each dispatch's uniform block into the staging words
  private readonly paramsBuffer: GPUBuffer; // (ARENA_SLOTS, slotBytes) uniform blocks
  private slot = 0;
  private readonly dynamicOffset = new Uint32Array(1); // [1] the params block's offset, reused by every dispatch
  private readonly bindGroups = new Map<CachedPipeline, BindNode>(); // roots of the bind-group trees
  private readonly freeReadbacks: GPUBuffer[] = [];
  private readonly pending = new Set<(e: LlmError) => void>();
  private lostError: LlmError | null = null;
  /**
   * While true nothing is recorded or submitted and reads resolve with zeros: the backend records a step this way
   * to learn which pipelines it uses (their GPU pipelines are never touched) before compiling them asynchronously.
   */
  discarding = false;
  /** Called with the pipeline label of every recorded dispatch (the structural profiler). */
  onDispatch: ((label: string) => void) | null = null;

  constructor(private readonly device: GPUDevice) {
    const align = device.limits.minUniformBufferOffsetAlignment;
    this.slotBytes = Math.ceil(PARAMS_BYTES / align) * align;
    this.staging = new ArrayBuffer(ARENA_SLOTS * this.slotBytes);
    this.stagingU32 = new Uint32Array(this.staging);
    this.stagingF32 = new Float32Array(this.staging);
    this.params = new ParamsWriter(this.stagingU32, this.stagingF32);
    this.paramsBuffer = device.createBuffer({
      label: 'params-arena',
      size: this.staging.byteLength,
      usage: BufferUsage.UNIFORM | BufferUsage.COPY_DST,
    });
  }

  /** Marks the device lost: pending and future reads reject with `device-lost`. */
  markLost(reason: string): void {
    this.lostError = new LlmError(
      'device-lost',
      `WebGPU device lost (${reason}); pending work was discarded. Create a new engine to continue.`,
      { details: { reason } },
    );
    for (const reject of this.pending) reject(this.lostError);
    this.pending.clear();
  }

  /** Throws the device-lost error if the device is gone. */
  checkAlive(): void {
    if (this.lostError) throw this.lostError;
  }

  /** Records one dispatch. `buffers[b]` is the buffer of binding b (binding 0, the params block, is implied). */
  dispatch(
    p: CachedPipeline,
    buffers: readonly (Binding | null)[],
    writeParams: (w: ParamsWriter) => void,
    groups: readonly [number, number, number],
  ): void {
    this.checkAlive();
    if (this.discarding) return;
    if (this.slot === ARENA_SLOTS) this.flush();
    const slot = this.slot++;
    const base = (slot * this.slotBytes) / 4;
    this.stagingU32.fill(0, base, base + PARAMS_BYTES / 4);
    writeParams(this.params.at(base));
    const pass = this.ensurePass();
    pass.setPipeline(p.pipeline);
    this.dynamicOffset[0] = slot * this.slotBytes;
    pass.setBindGroup(0, this.bindGroup(p, buffers), this.dynamicOffset, 0, 1);
    pass.dispatchWorkgroups(groups[0], groups[1], groups[2]);
    this.stats.dispatches++;
    this.onDispatch?.(p.label);
  }

  /** Records a buffer-to-buffer copy (ends the current compute pass). */
  copy(src: GPUBuffer, srcOffset: number, dst: GPUBuffer, dstOffset: number, size: number): void {
    this.checkAlive();
    if (this.discarding) return;
    this.ensurePass();
    this.pass!.end();
    this.pass = null;
    this.encoder!.copyBufferToBuffer(src, srcOffset, dst, dstOffset, size);
  }

  /** True when commands are recorded but not submitted. */
  get hasPending(): boolean {
    return this.encoder !== null;
  }

  /** Writes the used params, ends the pass and submits the encoder (no-op when nothing is recorded). */
  flush(): void {
    if (!this.encoder) return;
    if (this.pass) this.pass.end();
    if (this.slot > 0) this.device.queue.writeBuffer(this.paramsBuffer, 0, this.staging, 0, this.slot * this.slotBytes);
    this.device.queue.submit([this.encoder.finish()]);
    this.stats.submissions++;
    this.encoder = null;
    this.pass = null;
    this.slot = 0;
  }

  /**
   * Copies `size` bytes of `src` at `offset` into a mappable buffer, submits everything recorded so far and
   * resolves with the bytes once the GPU is done.
   */
  async read(src: GPUBuffer, offset: number, size: number): Promise<ArrayBuffer> {
    this.checkAlive();
    if (this.discarding) return new ArrayBuffer(size);
    const staging = this.takeReadback(size);
    this.copy(src, offset, staging, 0, size);
    this.flush();
    this.stats.bytesRead += size;
    let reject!: (e: LlmError) => void;
    const lost = new Promise<never>((_, rej) => {
      reject = rej;
    });
    this.pending.add(reject);
    try {
      await Promise.race([staging.mapAsync(MAP_MODE_READ, 0, size), lost]);
      const bytes = staging.getMappedRange(0, size).slice(0);
      staging.unmap();
      this.freeReadbacks.push(staging);
      return bytes;
    } catch (cause) {
      if (cause instanceof LlmError) throw cause;
      throw (
        this.lostError ?? new LlmError('device-lost', `reading back GPU results failed: ${String(cause)}`, { cause })
      );
    } finally {
      this.pending.delete(reject);
    }
  }

  /** Releases the arena and pooled buffers. */
  destroy(): void {
    this.paramsBuffer.destroy();
    for (const b of this.freeReadbacks) b.destroy();
    this.freeReadbacks.length = 0;
    this.bindGroups.clear();
  }

  private ensurePass(): GPUComputePassEncoder {
    if (!this.encoder) this.encoder = this.device.createCommandEncoder({ label: 'webgguf-step' });
    if (!this.pass) this.pass = this.encoder.beginComputePass({ label: 'webgguf-step' });
    return this.pass;
  }

  private bindGroup(p: CachedPipeline, buffers: readonly (Binding | null)[]): GPUBindGroup {
    let root = this.bindGroups.get(p);
    if (!root) {
      root = bindNode();
      this.bindGroups.set(p, root);
    }
    let node: BindNode = root;
    for (let b = 1; b < p.bindings.length; b++) {
      const x = buffers[b];
      if (p.bindings[b] === null || !x) continue;
      const buffer = isRange(x) ? x.buffer : x;
      const offset = isRange(x) ? x.offset : -1;
      let byOffset: Map<number, BindNode> | undefined = node.next.get(buffer);
      if (!byOffset) {
        byOffset = new Map();
        node.next.set(buffer, byOffset);
      }
      let child: BindNode | undefined = byOffset.get(offset);
      if (!child) {
        child = bindNode();
        byOffset.set(offset, child);
      }
      node = child;
    }
    node.group ??= this.createBindGroup(p, buffers);
    return node.group;
  }

  private createBindGroup(p: CachedPipeline, buffers: readonly (Binding | null)[]): GPUBindGroup {
    const entries: GPUBindGroupEntry[] = [
      { binding: 0, resource: { buffer: this.paramsBuffer, offset: 0, size: PARAMS_BYTES } },
    ];
    for (let b = 1; b < p.bindings.length; b++) {
      if (p.bindings[b] === null) continue;
      const buffer = buffers[b];
      if (!buffer) throw new LlmError('invalid-request', `recording ${p.label}: binding ${b} has no buffer`);
      entries.push({
        binding: b,
        resource: isRange(buffer) ? { buffer: buffer.buffer, offset: buffer.offset, size: buffer.size } : { buffer },
      });
    }
    return this.device.createBindGroup({ label: p.label, layout: p.layout, entries });
  }

  private takeReadback(size: number): GPUBuffer {
    const i = this.freeReadbacks.findIndex((b) => b.size >= size);
    if (i >= 0) return this.freeReadbacks.splice(i, 1)[0]!;
    return this.device.createBuffer({
      label: 'readback',
      size: Math.max(256, Math.ceil(size / 256) * 256),
      usage: BufferUsage.MAP_READ | BufferUsage.COPY_DST,
    });
  }
}
