/**
 * The KV cache on the GPU: one K and one V buffer per layer, and the ops that write it (store_kv, the fused
 * rope_store that also rotates Q and K, copy_kv between sequence slots), read it back or write it from the host
 * (readKv / writeKv) and shift it (through the host, `kv-shift.ts`). Used by WebGpuOps through a narrow host
 * interface; attention reads the buffers through `layer`.
 */

import { LlmError } from '../../errors.js';
import { checkKvRows, kvLayerCols, kvPositionCols } from '../kv-rows.js';
import { checkKvShift, type KvShift, kvRowsLayers, shiftKvBytes } from '../kv-shift.js';
import type { KvCacheSpec, KvRows, RopeParams } from '../ops.js';
import type { GpuContext } from './device.js';
import type { GpuActivation } from './gpu-resources.js';
import type { CachedPipeline, PipelineSpec } from './pipelines.js';
import { BufferUsage } from './gpu-flags.js';
import { ropeYarnUniforms } from './rope-table.js';
import { grid, type StepRecorder } from './step-recorder.js';

const COPY = BufferUsage.COPY_SRC | BufferUsage.COPY_DST;

/** Workgroup size of the elementwise KV kernels. */
const WG_FLAT = 256;

/** The K and V buffers of one layer: (nSlots, contextLength, nKvHeads·headDim of the layer) F each (f16 on the f16 path). */
export interface KvLayer {
  readonly k: GPUBuffer;
  readonly v: GPUBuffer;
}

/** Where the step being recorded writes: its first position and sequence slot. */
export interface KvStep {
  readonly startPos: number;
  readonly slot: number;
}

/** What the KV cache needs of the backend. */
export interface KvCacheHost {
  readonly ctx: GpuContext;
  readonly rec: StepRecorder;
  /** min(maxStorageBufferBindingSize, maxBufferSize) */
  readonly maxBinding: number;
  pipe(spec: Omit<PipelineSpec, 'quant'>): CachedPipeline;
  buffer(label: string, size: number, extraUsage: number): GPUBuffer;
  /** Destroys a buffer once the work recorded so far is submitted. */
  release(b: GPUBuffer): void;
  /** The RoPE inverse-frequency table of a parameter set. */
  ropeTable(params: RopeParams): GPUBuffer;
}

/** See the file header. */
export class KvCacheOps {
  private kv: KvLayer[] = []; // per layer: (nSlots, contextLength, nKvHeads·headDim) F
  private spec: KvCacheSpec | null = null;

  constructor(private readonly h: KvCacheHost) {}

  /** The K and V buffers of a layer (checked by `require`). */
  layer(i: number): KvLayer {
    return this.kv[i]!;
  }

  /** (Re)allocates the cache: the old buffers are released. */
  create(spec: KvCacheSpec): void {
    for (const l of this.kv) {
      this.h.release(l.k);
      this.h.release(l.v);
    }
    const native = this.h.ctx.isF16 ? 'f16' : 'f32';
    if (spec.kvType !== undefined && spec.kvType !== native) {
      // TODO(#20): quantized (q8_0 / q4_0) and non-native float KV in the WGSL store and attention kernels.
      throw new LlmError(
        'unsupported-type',
        `allocating the KV cache: the WebGPU backend stores KV as ${native} on this device and cannot store kvType ` +
          `'${spec.kvType}' yet; use kvType '${native}' or the wasm backend`,
        { details: { kvType: spec.kvType, supported: [native] } },
      );
    }
    const elemBytes = this.h.ctx.isF16 ? 2 : 4;
    const maxBinding = this.h.maxBinding;
    const widest = Math.max(0, ...spec.layers.map((_, l) => kvLayerCols(spec, l))); // the largest layer decides
    const layerBytes = spec.nSlots * spec.contextLength * widest * elemBytes;
    if (layerBytes > maxBinding) {
      const maxCtx = Math.floor(maxBinding / (spec.nSlots * widest * elemBytes));
      throw new LlmError(
        'out-of-memory',
        `allocating the KV cache: one layer needs ${layerBytes} bytes at context ${spec.contextLength}, over the storage binding limit of ${maxBinding}; use a context length of at most ${maxCtx}`,
        {
          details: {
            layerBytes,
            contextLength: spec.contextLength,
            maxContextLength: maxCtx,
            maxStorageBufferBindingSize: maxBinding,
          },
        },
      );
    }
    this.kv = [];
    for (let i = 0; i < spec.layers.length; i++) {
      // Layer i's own width; at least one word (a layer without KV binds nothing but still has a buffer).
      const size = Math.max(
        4,
        Math.ceil((spec.nSlots * spec.contextLength * kvLayerCols(spec, i) * elemBytes) / 4) * 4,
      );
      // COPY_SRC / COPY_DST: readKv / writeKv (the persisted prompt cache).
      this.kv.push({ k: this.h.buffer(`k_cache.${i}`, size, COPY), v: this.h.buffer(`v_cache.${i}`, size, COPY) });
    }
    this.spec = spec;
  }

  /** The cache's spec, or a clear error where `layer` has no cache. */
  require(op: string, layer: number): KvCacheSpec {
    if (!this.spec || layer < 0 || layer >= this.kv.length) {
      throw new LlmError('invalid-request', `${op}: no KV cache for layer ${layer}; call createKvCache first`);
    }
    return this.spec;
  }

  /** Writes k and v rows [0, n) at the step's positions. */
  store(st: KvStep, layer: number, k: GpuActivation, v: GpuActivation, n: number): void {
    const spec = this.require('storeKv', layer);
    const kvCols = kvLayerCols(spec, layer);
    if (st.startPos + n > spec.contextLength) {
      throw new LlmError(
        'context-overflow',
        `storeKv: positions ${st.startPos}…${st.startPos + n - 1} exceed the context length ${spec.contextLength}`,
        {
          details: { startPos: st.startPos, n, contextLength: spec.contextLength },
        },
      );
    }
    const count = n * kvCols;
    const dst = (st.slot * spec.contextLength + st.startPos) * kvCols;
    const pipe = this.h.pipe({ kernel: 'store_kv', wgSize: WG_FLAT });
    const l = this.kv[layer]!;
    this.h.rec.dispatch(
      pipe,
      [null, k.buffer, v.buffer, l.k, l.v],
      (p) => p.u(count).u(dst),
      grid(Math.ceil(count / WG_FLAT)),
    );
  }

  /** RoPE on q and k, then k and v stored, as one dispatch; false, having recorded nothing, where it does not fuse. */
  ropeStore(
    st: KvStep,
    layer: number,
    qa: GpuActivation,
    ka: GpuActivation,
    va: GpuActivation,
    n: number,
    params: RopeParams,
  ): boolean {
    const spec = this.require('ropeStoreKv', layer);
    const kvCols = kvLayerCols(spec, layer);
    const isFusable = !params.multi && ka.cols === kvCols && va.cols === kvCols && qa.cols % params.headDim === 0;
    if (!isFusable || qa.buffer === ka.buffer || qa.buffer === va.buffer || ka.buffer === va.buffer) return false;
    if (st.startPos + n > spec.contextLength) {
      throw new LlmError(
        'context-overflow',
        `ropeStoreKv: positions ${st.startPos}…${st.startPos + n - 1} exceed the context length ${spec.contextLength}`,
        {
          details: { startPos: st.startPos, n, contextLength: spec.contextLength },
        },
      );
    }
    const half = params.nRot / 2;
    const total = n * ((qa.cols + kvCols) / params.headDim) * half + n * kvCols;
    const y = ropeYarnUniforms(params);
    const l = this.kv[layer]!;
    const pipe = this.h.pipe({ kernel: 'rope_store', wgSize: WG_FLAT });
    this.h.rec.dispatch(
      pipe,
      [null, qa.buffer, ka.buffer, va.buffer, this.h.ropeTable(params), l.k, l.v],
      (p) =>
        p
          .u(qa.cols)
          .u(kvCols)
          .u(params.headDim)
          .u(params.nRot)
          .u(st.startPos)
          .u(params.kind === 'neox' ? 1 : 0)
          .u(n)
          .u((st.slot * spec.contextLength + st.startPos) * kvCols)
          .f(params.freqScale)
          .f(y.extFactor)
          .f(y.mscale)
          .f(y.corrLo)
          .f(y.corrHi),
      grid(Math.ceil(total / WG_FLAT)),
    );
    return true;
  }

  /** Copies positions [0, nPositions) of a slot into another in every layer; false where there is nothing to copy. */
  copy(srcSlot: number, dstSlot: number, nPositions: number): boolean {
    const spec = this.require('copyKv', 0);
    if (srcSlot === dstSlot || nPositions <= 0) return false;
    if (Math.max(srcSlot, dstSlot) >= spec.nSlots || nPositions > spec.contextLength) {
      throw new LlmError(
        'invalid-request',
        `copyKv: slots ${srcSlot}→${dstSlot} / ${nPositions} positions are outside the cache (${spec.nSlots} slots, context ${spec.contextLength})`,
      );
    }
    const pipe = this.h.pipe({ kernel: 'copy_kv', wgSize: WG_FLAT });
    for (const [il, l] of this.kv.entries()) {
      const kvCols = kvLayerCols(spec, il);
      const count = nPositions * kvCols;
      if (count === 0) continue;
      this.h.rec.dispatch(
        pipe,
        [null, l.k, l.v],
        (p) =>
          p
            .u(count)
            .u(srcSlot * spec.contextLength * kvCols)
            .u(dstSlot * spec.contextLength * kvCols),
        grid(Math.ceil(count / WG_FLAT)),
      );
    }
    return true;
  }

  /** Through the host: reads the slot's KV, shifts it (`kv-shift.ts`), writes it back (a step's worth of traffic). */
  async shift(slot: number, shift: KvShift): Promise<void> {
    const spec = this.require('shiftKv', 0);
    checkKvShift(spec, slot, shift);
    const rows = await this.read(slot, shift.nPositions);
    shiftKvBytes(spec, rows.elementType, kvRowsLayers(spec, rows), shift);
    await this.write(slot, rows);
  }

  /** `Ops.readKv`: positions [0, nPositions) of every layer of `slot`, read back. */
  async read(slot: number, nPositions: number): Promise<KvRows> {
    const spec = this.require('readKv', 0);
    const elementType = this.h.ctx.isF16 ? 'f16' : 'f32';
    checkKvRows('readKv', spec, slot, nPositions, elementType);
    const eb = elementType === 'f16' ? 2 : 4;
    const out = new Uint8Array(2 * nPositions * kvPositionCols(spec) * eb); // per layer: K then V [nPositions, cols_l]
    let at = 0;
    for (let l = 0; l < spec.layers.length; l++) {
      const bytes = nPositions * kvLayerCols(spec, l) * eb;
      if (bytes === 0) continue;
      const offset = slot * spec.contextLength * kvLayerCols(spec, l) * eb;
      const padded = Math.ceil(bytes / 4) * 4; // copies are whole 4-byte words; the cache buffers are padded likewise
      const layer = this.layer(l);
      out.set(new Uint8Array(await this.h.rec.read(layer.k, offset, padded), 0, bytes), at);
      out.set(new Uint8Array(await this.h.rec.read(layer.v, offset, padded), 0, bytes), at + bytes);
      at += 2 * bytes;
    }
    return { elementType, nPositions, data: out };
  }

  /** `Ops.writeKv`: the inverse of `read`, queued after the work recorded so far. */
  async write(slot: number, rows: KvRows): Promise<void> {
    const spec = this.require('writeKv', 0);
    const elementType = this.h.ctx.isF16 ? 'f16' : 'f32';
    checkKvRows('writeKv', spec, slot, rows.nPositions, elementType, rows);
    const eb = elementType === 'f16' ? 2 : 4;
    if (rows.nPositions === 0) return;
    this.h.rec.flush(); // recorded work first, then the writes, in queue order
    let at = 0;
    for (let l = 0; l < spec.layers.length; l++) {
      const bytes = rows.nPositions * kvLayerCols(spec, l) * eb;
      if (bytes === 0) continue;
      const offset = slot * spec.contextLength * kvLayerCols(spec, l) * eb;
      const padded = Math.ceil(bytes / 4) * 4;
      const layer = this.layer(l);
      for (const [i, buf] of [layer.k, layer.v].entries()) {
        const chunk = new Uint8Array(padded);
        chunk.set(rows.data.subarray(at + i * bytes, at + (i + 1) * bytes));
        if (padded !== bytes)
          chunk.set(new Uint8Array(await this.h.rec.read(buf, offset + padded - 4, 4)).subarray(bytes % 4), bytes);
        this.h.ctx.device.queue.writeBuffer(buf, offset, chunk);
      }
      at += 2 * bytes;
    }
  }
}
