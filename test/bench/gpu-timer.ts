/**
 * Opt-in GPU timing of the WebGPU backend with `timestamp-query`: `createGpuTimer(device)` returns a wrapped device
 * to build the backend on. While `enabled`, every compute dispatch is recorded in its own pass with `timestampWrites`,
 * the queries are resolved in the same command buffer (still one submission per step) and read back after it, and the
 * GPU milliseconds add up per op kind (the caller's `scope`, e.g. 'matmul ffn') and per kernel (pipeline label).
 * Disabled, the wrapper hands out the device's own encoders untouched; production code never creates a timer.
 */

import { MAP_MODE_READ } from '../../src/backend/webgpu/gpu-flags.js';

/** `GPUBufferUsage` bits used here (spec values; gpu-flags.ts has no QUERY_RESOLVE). */
const USAGE_MAP_READ = 0x0001;
const USAGE_COPY_SRC = 0x0004;
const USAGE_COPY_DST = 0x0008;
const USAGE_QUERY_RESOLVE = 0x0200;
/** Queries per query set: the WebGPU maximum (two per timed dispatch). */
const QUERIES_PER_SET = 4096;

/** GPU time accumulated since the last `reset()`. */
export interface GpuTimings {
  /** Timed compute passes (one per dispatch). */
  readonly passes: number;
  /** Command buffers whose timestamps were read back. */
  readonly submissions: number;
  /** Sum of the passes' GPU durations, ms. */
  readonly busyMs: number;
  /** Per submission, first pass start to last pass end, summed, ms (≥ busyMs: includes gaps between passes). */
  readonly spanMs: number;
  /** Op kind (the `scope` at dispatch time, else the kernel family) → GPU ms. */
  readonly byKind: ReadonlyMap<string, number>;
  /** Op kind → timed dispatches. */
  readonly dispatchesByKind: ReadonlyMap<string, number>;
  /** Pipeline label (e.g. 'gemv.q4_0.f32.wg64') → GPU ms. */
  readonly byKernel: ReadonlyMap<string, number>;
}

/** A GPU timer bound to one device (see the file header). */
export interface GpuTimer {
  /** The device to create the backend on: the real one behind a thin wrapper. */
  readonly device: GPUDevice;
  /** Time dispatches recorded from now on (default false: encoders pass through untouched). */
  enabled: boolean;
  /** Op kind charged for dispatches recorded while set (null: the kernel family from the pipeline label). */
  scope: string | null;
  /** Waits for the timestamps of every submitted timed command buffer and returns the totals since `reset()`. */
  collect(): Promise<GpuTimings>;
  /** Clears the totals (in-flight readbacks still land; call after `collect()` to start clean). */
  reset(): void;
  /** Releases the query sets and buffers (not the device). */
  destroy(): void;
}

/** Why GPU timing cannot work on `device`, or null when it can. */
export function gpuTimerUnavailableReason(device: GPUDevice): string | null {
  if (!device.features.has('timestamp-query')) {
    return 'the device has no timestamp-query feature (the adapter does not offer it, or it was not requested)';
  }
  return null;
}

/** The kernel family of a pipeline label: 'gemv.q4_0.f32.wg64' → 'gemv.q4_0', 'rms_norm.main.f32' → 'rms_norm'. */
export function kernelFamily(label: string): string {
  const parts = label.split('.');
  if (parts.length <= 2) return parts[0] || 'unlabelled';
  return /^(gemv|gemm|embed|get_rows|dequant)/.test(parts[0]!) ? `${parts[0]}.${parts[1]}` : parts[0]!;
}

/** One timed dispatch: where its two timestamps go and what it is charged to. */
interface TimedDispatch {
  readonly set: number; // index into the encoder's query sets
  readonly query: number; // first of its two queries
  readonly kind: string;
  readonly kernel: string;
}

/** A query set with its resolve buffer and mappable copy, (QUERIES_PER_SET) u64 ns each. */
interface TimerSet {
  readonly set: GPUQuerySet;
  readonly resolve: GPUBuffer;
  readonly readback: GPUBuffer;
}

/** What a finished timed command buffer needs read back. */
interface PendingReadback {
  readonly sets: GPUQuerySet[];
  readonly readbacks: GPUBuffer[]; // per set: (QUERIES_PER_SET) u64 ns, MAP_READ
  readonly resolves: GPUBuffer[]; // per set: (QUERIES_PER_SET) u64 ns, QUERY_RESOLVE
  readonly dispatches: TimedDispatch[];
}

/**
 * Wraps `device` for GPU timing.
 * @returns the timer, or null when `gpuTimerUnavailableReason(device)` is not null.
 */
export function createGpuTimer(device: GPUDevice): GpuTimer | null {
  if (gpuTimerUnavailableReason(device) !== null) return null;
  return new TimestampTimer(device);
}

class TimestampTimer implements GpuTimer {
  readonly device: GPUDevice;
  enabled = false;
  scope: string | null = null;
  private readonly freeSets: GPUQuerySet[] = [];
  private readonly freeResolves: GPUBuffer[] = [];
  private readonly freeReadbacks: GPUBuffer[] = [];
  private readonly owned: (GPUQuerySet | GPUBuffer)[] = [];
  private readonly finished = new WeakMap<GPUCommandBuffer, PendingReadback>();
  private readonly inflight = new Set<Promise<void>>();
  private totals = emptyTotals();
  private failure: unknown = null;

  constructor(private readonly real: GPUDevice) {
    const queue = wrapMethods(real.queue, {
      submit: (buffers: Iterable<GPUCommandBuffer>): undefined => {
        const list = [...buffers];
        real.queue.submit(list);
        for (const cb of list) {
          const pending = this.finished.get(cb);
          if (pending) this.startReadback(pending);
        }
        return undefined;
      },
    });
    this.device = wrapMethods(real, {
      createCommandEncoder: (desc?: GPUCommandEncoderDescriptor): GPUCommandEncoder => {
        const enc = real.createCommandEncoder(desc);
        return this.enabled ? new TimedEncoder(this, enc).proxy : enc;
      },
      queue,
    });
  }

  async collect(): Promise<GpuTimings> {
    while (this.inflight.size > 0) await Promise.all([...this.inflight]);
    if (this.failure !== null) {
      const cause = this.failure;
      this.failure = null;
      throw new Error(`reading GPU timestamps failed: ${String(cause)}`, { cause });
    }
    const t = this.totals;
    return {
      ...t,
      byKind: new Map(t.byKind),
      dispatchesByKind: new Map(t.dispatchesByKind),
      byKernel: new Map(t.byKernel),
    };
  }

  reset(): void {
    this.totals = emptyTotals();
  }

  destroy(): void {
    for (const o of this.owned) o.destroy();
    this.owned.length = 0;
    this.freeSets.length = 0;
    this.freeResolves.length = 0;
    this.freeReadbacks.length = 0;
  }

  /** A query set and its resolve/readback buffers from the pools. */
  takeSet(): TimerSet {
    const bytes = QUERIES_PER_SET * 8;
    const set =
      this.freeSets.pop() ??
      this.own(this.real.createQuerySet({ label: 'gpu-timer', type: 'timestamp', count: QUERIES_PER_SET }));
    const resolve =
      this.freeResolves.pop() ??
      this.own(
        this.real.createBuffer({
          label: 'gpu-timer-resolve',
          size: bytes,
          usage: USAGE_QUERY_RESOLVE | USAGE_COPY_SRC,
        }),
      );
    const readback =
      this.freeReadbacks.pop() ??
      this.own(
        this.real.createBuffer({ label: 'gpu-timer-readback', size: bytes, usage: USAGE_MAP_READ | USAGE_COPY_DST }),
      );
    return { set, resolve, readback };
  }

  /** Registers a finished command buffer whose timestamps are read back once it is submitted. */
  noteFinished(cb: GPUCommandBuffer, pending: PendingReadback): void {
    this.finished.set(cb, pending);
  }

  private own<T extends GPUQuerySet | GPUBuffer>(o: T): T {
    this.owned.push(o);
    return o;
  }

  private startReadback(p: PendingReadback): void {
    const job = (async (): Promise<void> => {
      const values: BigUint64Array[] = [];
      for (const rb of p.readbacks) {
        await rb.mapAsync(MAP_MODE_READ);
        values.push(new BigUint64Array(rb.getMappedRange().slice(0)));
        rb.unmap();
      }
      this.account(p.dispatches, values);
    })()
      .catch((e: unknown) => {
        this.failure ??= e;
      })
      .finally(() => {
        this.inflight.delete(job);
        this.freeSets.push(...p.sets);
        this.freeResolves.push(...p.resolves);
        this.freeReadbacks.push(...p.readbacks);
      });
    this.inflight.add(job);
  }

  private account(dispatches: readonly TimedDispatch[], values: readonly BigUint64Array[]): void {
    const t = this.totals;
    let first: bigint | null = null;
    let last: bigint | null = null;
    for (const d of dispatches) {
      const v = values[d.set]!;
      const begin = v[d.query]!;
      const end = v[d.query + 1]!;
      // A zero or backwards pair means the implementation wrote no timestamp (allowed by the spec): charge nothing.
      const ms = end > begin && begin > 0n ? Number(end - begin) / 1e6 : 0;
      if (ms > 0) {
        if (first === null || begin < first) first = begin;
        if (last === null || end > last) last = end;
      }
      t.passes++;
      t.busyMs += ms;
      t.byKind.set(d.kind, (t.byKind.get(d.kind) ?? 0) + ms);
      t.dispatchesByKind.set(d.kind, (t.dispatchesByKind.get(d.kind) ?? 0) + 1);
      t.byKernel.set(d.kernel, (t.byKernel.get(d.kernel) ?? 0) + ms);
    }
    if (first !== null && last !== null) t.spanMs += Number(last - first) / 1e6;
    t.submissions++;
  }
}

type MutableTotals = { -readonly [K in keyof GpuTimings]: GpuTimings[K] } & {
  byKind: Map<string, number>;
  dispatchesByKind: Map<string, number>;
  byKernel: Map<string, number>;
};

function emptyTotals(): MutableTotals {
  return {
    passes: 0,
    submissions: 0,
    busyMs: 0,
    spanMs: 0,
    byKind: new Map(),
    dispatchesByKind: new Map(),
    byKernel: new Map(),
  };
}

/**
 * A command encoder that records each dispatch in its own timed compute pass. The backend's pass (one per step) is
 * replaced by a recorder of pipeline and bind-group state, replayed into a fresh real pass at every dispatch.
 */
class TimedEncoder {
  readonly proxy: GPUCommandEncoder;
  private readonly sets: TimerSet[] = [];
  private readonly dispatches: TimedDispatch[] = [];
  private used = QUERIES_PER_SET; // queries used in the last set (full: take a new one first)

  constructor(
    private readonly timer: TimestampTimer,
    private readonly real: GPUCommandEncoder,
  ) {
    this.proxy = wrapMethods(real, {
      beginComputePass: (desc?: GPUComputePassDescriptor): GPUComputePassEncoder => statePass(this, desc?.label ?? ''),
      finish: (desc?: GPUCommandBufferDescriptor): GPUCommandBuffer => this.finish(desc),
    });
  }

  /** Records one dispatch in its own pass with begin/end timestamps. */
  dispatch(state: PassState, run: (pass: GPUComputePassEncoder) => void): void {
    if (this.used + 2 > QUERIES_PER_SET) {
      this.sets.push(this.timer.takeSet());
      this.used = 0;
    }
    const setIndex = this.sets.length - 1;
    const { set } = this.sets[setIndex]!;
    const query = this.used;
    this.used += 2;
    const kernel = state.pipeline?.label || 'unlabelled';
    const pass = this.real.beginComputePass({
      label: kernel,
      timestampWrites: { querySet: set, beginningOfPassWriteIndex: query, endOfPassWriteIndex: query + 1 },
    });
    if (state.pipeline) pass.setPipeline(state.pipeline);
    for (const [index, [group, offsets]] of state.groups) pass.setBindGroup(index, group, offsets);
    run(pass);
    pass.end();
    this.dispatches.push({ set: setIndex, query, kind: this.timer.scope ?? kernelFamily(kernel), kernel });
  }

  private finish(desc?: GPUCommandBufferDescriptor): GPUCommandBuffer {
    this.sets.forEach(({ set, resolve, readback }, i) => {
      const count = i === this.sets.length - 1 ? this.used : QUERIES_PER_SET;
      this.real.resolveQuerySet(set, 0, count, resolve, 0);
      this.real.copyBufferToBuffer(resolve, 0, readback, 0, count * 8);
    });
    const cb = this.real.finish(desc);
    if (this.dispatches.length > 0) {
      this.timer.noteFinished(cb, {
        sets: this.sets.map((s) => s.set),
        resolves: this.sets.map((s) => s.resolve),
        readbacks: this.sets.map((s) => s.readback),
        dispatches: this.dispatches,
      });
    }
    return cb;
  }
}

/** Pipeline and bind groups set on a pass so far. */
interface PassState {
  pipeline: GPUComputePipeline | null;
  readonly groups: Map<number, [GPUBindGroup | null, number[]]>;
}

/** Stands in for a compute pass: keeps state, and turns each dispatch into a timed pass of its own. */
function statePass(enc: TimedEncoder, label: string): GPUComputePassEncoder {
  const state: PassState = { pipeline: null, groups: new Map() };
  const pass = {
    label,
    setPipeline: (p: GPUComputePipeline): undefined => {
      state.pipeline = p;
      return undefined;
    },
    setBindGroup: (
      index: number,
      group: GPUBindGroup | null,
      offsets?: Iterable<number>,
      start?: number,
      length?: number,
    ): undefined => {
      let list: number[] = [];
      if (offsets instanceof Uint32Array)
        list = Array.from(offsets.subarray(start ?? 0, (start ?? 0) + (length ?? offsets.length)));
      else if (offsets) list = [...offsets];
      state.groups.set(index, [group, list]);
      return undefined;
    },
    dispatchWorkgroups: (x: number, y?: number, z?: number): undefined => {
      enc.dispatch(state, (p) => p.dispatchWorkgroups(x, y, z));
      return undefined;
    },
    dispatchWorkgroupsIndirect: (buffer: GPUBuffer, offset: number): undefined => {
      enc.dispatch(state, (p) => p.dispatchWorkgroupsIndirect(buffer, offset));
      return undefined;
    },
    end: (): undefined => undefined,
    pushDebugGroup: (): undefined => undefined,
    popDebugGroup: (): undefined => undefined,
    insertDebugMarker: (): undefined => undefined,
  };
  return pass as unknown as GPUComputePassEncoder;
}

/**
 * A stand-in for a WebGPU object: `overrides` replace some members; every other property is read from the real
 * object, methods bound to it (native implementations check `this`).
 */
function wrapMethods<T extends object>(real: T, overrides: Record<string, unknown>): T {
  return new Proxy(real, {
    get(target, prop) {
      if (typeof prop === 'string' && Object.hasOwn(overrides, prop)) return overrides[prop];
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
    set(target, prop, value) {
      return Reflect.set(target, prop, value, target);
    },
  });
}
