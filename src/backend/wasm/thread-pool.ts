/**
 * Row-parallel matvecs on helper threads sharing the kernels' memory: one compiled module is instantiated in every
 * helper (Node worker_threads, or Web Workers when the page is crossOriginIsolated) over the same shared
 * WebAssembly.Memory. A dispatch writes the kernel index and arguments to a control block in that memory, opens a
 * chunk counter, bumps a generation counter and wakes the helpers (Atomics.notify). Every thread, the caller
 * included, then takes chunks of rows with Atomics.add until none are left (work stealing: a helper that wakes late
 * or is descheduled on a busy machine costs nothing but its in-flight chunk), and the caller waits only for chunks
 * taken, never for helpers to wake. Helpers spin briefly before sleeping (decode issues hundreds of matvecs per
 * token; a wake-up costs tens of µs). The caller never blocks in Atomics.wait where that is forbidden (a browser's
 * main thread): there it spins.
 */

import { LlmError } from '../../errors.js';
import { GEMV_NAMES, type GemvKernel, type GemvName } from './kernel-exports.js';
import { IS_NODE } from './loader.js';
import type { WasmHeap } from './wasm-heap.js';

// Control block layout, in i32 slots from its start.
const GEN = 0; // generation: +1 per dispatch (or stop)
const NEXT = 1; // next chunk to take; CLOSED between dispatches
const DONE = 2; // chunks finished in the current dispatch
const FN = 3; // index into GEMV_NAMES
const ARGS = 4; // 8 kernel arguments (r0/r1 are replaced by each chunk's rows)
const ROWS = 12; // total rows
const CHUNKS = 13; // number of chunks the rows are split into
const STOP = 14; // non-zero: helpers exit
const ERROR = 15; // non-zero: a helper's kernel threw
const CTRL_SLOTS = 16;
const CLOSED = 1 << 30;

/**
 * Polls of the generation counter before a helper sleeps (a fraction of a millisecond): decode has single-threaded
 * stretches of tens of µs (attention, norms) between matvecs, and a helper that slept through one costs the next
 * matvec its wake-up. 400 000 measured +4 % decode tok/s over 50 000 at 2 threads (two interleaved runs each).
 */
const HELPER_SPINS = 400000;

/**
 * Most chunks a dispatch is split into per thread. Each chunk is a fresh memory stream the hardware prefetcher has to
 * pick up, which costs decode (weights streamed from memory) more than it buys in load balance: at 2 threads, 2
 * chunks per thread streamed Q4_0 896×896 at 23 GB/s vs 15 with 8, and decoded 63 vs 57 tok/s (two interleaved runs);
 * 2 still lets a thread that finishes early take the last chunk of one that was descheduled.
 */
const CHUNKS_PER_THREAD = 2;

/** Source of a helper thread (plain JS, runs as a Node eval worker or a Blob-URL Web Worker). */
const WORKER_SOURCE = `'use strict';
(function () {
  var port = null;
  if (typeof require === 'function') port = require('node:worker_threads').parentPort;
  function start(msg) {
    var inst = new WebAssembly.Instance(msg.module, { env: { memory: msg.memory } });
    var fns = msg.names.map(function (n) { return inst.exports[n]; });
    var c = new Int32Array(msg.memory.buffer);
    var b = msg.ctrlIndex, spin = msg.spin, seen = 0;
    if (port) port.postMessage('ready'); else self.postMessage('ready');
    for (;;) {
      var g = Atomics.load(c, b + ${GEN}), spins = 0;
      while (g === seen) {
        if (++spins > spin) { Atomics.wait(c, b + ${GEN}, seen); spins = 0; }
        g = Atomics.load(c, b + ${GEN});
      }
      seen = g;
      if (Atomics.load(c, b + ${STOP}) !== 0) return;
      for (;;) {
        var i = Atomics.add(c, b + ${NEXT}, 1), chunks = c[b + ${CHUNKS}];
        if (i >= chunks) break;
        var rows = c[b + ${ROWS}], a = b + ${ARGS};
        var r0 = Math.floor(rows * i / chunks), r1 = Math.floor(rows * (i + 1) / chunks);
        try {
          fns[c[b + ${FN}]](c[a], c[a + 1], c[a + 2], c[a + 3], r0, r1, c[a + 6], c[a + 7]);
        } catch (e) { Atomics.store(c, b + ${ERROR}, 1); }
        if (Atomics.add(c, b + ${DONE}, 1) + 1 === chunks) Atomics.notify(c, b + ${DONE});
      }
    }
  }
  if (port) port.once('message', start);
  else self.onmessage = function (e) { self.onmessage = null; start(e.data); };
})();
`;

/** A started helper thread of either kind. */
interface Helper {
  terminate(): void;
}

/** True when this thread may block in Atomics.wait (false on a browser's main thread). */
function canBlock(): boolean {
  try {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 1, 0);
    return true;
  } catch {
    return false;
  }
}

async function startHelper(
  onMessage: (m: unknown) => void,
  onError: (e: unknown) => void,
): Promise<Helper & { post(m: unknown): void }> {
  if (IS_NODE) {
    const { Worker } = await import('node:worker_threads');
    const w = new Worker(WORKER_SOURCE, { eval: true });
    w.unref();
    w.on('message', onMessage);
    w.on('error', onError);
    return { post: (m) => w.postMessage(m), terminate: () => void w.terminate() };
  }
  const url = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: 'text/javascript' }));
  const w = new Worker(url);
  URL.revokeObjectURL(url);
  w.onmessage = (e) => onMessage(e.data);
  w.onerror = (e) => onError(e);
  return { post: (m) => w.postMessage(m), terminate: () => w.terminate() };
}

/** Helper threads over one shared heap. */
export class ThreadPool {
  /** Threads that run a dispatch, the caller included. */
  readonly nThreads: number;
  private readonly ctrl: number; // i32 index of the control block
  private readonly heap: WasmHeap;
  private readonly helpers: Helper[];
  private readonly callerCanBlock = canBlock();
  private readonly fnIndex = new Map<GemvName, number>(GEMV_NAMES.map((name, i) => [name, i]));

  private constructor(heap: WasmHeap, ctrl: number, helpers: Helper[]) {
    this.heap = heap;
    this.ctrl = ctrl;
    this.helpers = helpers;
    this.nThreads = helpers.length + 1;
  }

  /**
   * Starts `nThreads − 1` helpers running `module` over `heap` (which must be shared) and waits until all are ready.
   * @throws LlmError('feature-missing') when a helper cannot start.
   */
  static async create(
    module: WebAssembly.Module,
    heap: WasmHeap,
    nThreads: number,
    spin = HELPER_SPINS,
  ): Promise<ThreadPool> {
    const region = heap.alloc(CTRL_SLOTS * 4, 'thread control block');
    const ctrlIndex = region.byteOffset >>> 2;
    const helpers: Helper[] = [];
    const ready: Promise<void>[] = [];
    try {
      for (let i = 1; i < nThreads; i++) {
        let resolve!: () => void;
        let reject!: (e: unknown) => void;
        ready.push(new Promise<void>((res, rej) => ((resolve = res), (reject = rej))));
        const h = await startHelper((m) => m === 'ready' && resolve(), reject);
        helpers.push(h);
        h.post({ module, memory: heap.memory, ctrlIndex, names: GEMV_NAMES, spin });
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<never>((_, rej) => {
        timer = setTimeout(() => rej(new Error('helpers did not report ready within 20 s')), 20000);
      });
      await Promise.race([Promise.all(ready), timeout]).finally(() => clearTimeout(timer));
    } catch (cause) {
      for (const h of helpers) h.terminate();
      throw new LlmError('feature-missing', `starting ${nThreads - 1} WASM helper thread(s) failed: ${String(cause)}`, {
        cause,
        details: { nThreads },
      });
    }
    return new ThreadPool(heap, ctrlIndex, helpers);
  }

  /**
   * Runs kernel `name` — `fn`, the calling thread's instance of it — as fn(w, x, out, k, r0, r1, n, outStride) over
   * rows 0 … rows−1 on all threads, in chunks of at least `minChunkRows` rows (at most CHUNKS_PER_THREAD per
   * thread). Returns after every chunk has finished. Allocates nothing (decode issues hundreds per token).
   */
  dispatch(
    name: GemvName,
    fn: GemvKernel,
    w: number,
    x: number,
    out: number,
    k: number,
    n: number,
    outStride: number,
    rows: number,
    minChunkRows = 8,
  ): void {
    const c = this.heap.i32;
    const b = this.ctrl;
    const chunks = Math.max(1, Math.min(Math.ceil(rows / minChunkRows), this.nThreads * CHUNKS_PER_THREAD));
    c[b + FN] = this.fnIndex.get(name)!;
    c[b + ARGS] = w;
    c[b + ARGS + 1] = x;
    c[b + ARGS + 2] = out;
    c[b + ARGS + 3] = k;
    c[b + ARGS + 6] = n;
    c[b + ARGS + 7] = outStride;
    c[b + ROWS] = rows;
    c[b + CHUNKS] = chunks;
    Atomics.store(c, b + DONE, 0);
    Atomics.store(c, b + NEXT, 0);
    Atomics.add(c, b + GEN, 1);
    Atomics.notify(c, b + GEN);
    for (;;) {
      const i = Atomics.add(c, b + NEXT, 1);
      if (i >= chunks) break;
      fn(w, x, out, k, Math.floor((rows * i) / chunks), Math.floor((rows * (i + 1)) / chunks), n, outStride);
      Atomics.add(c, b + DONE, 1);
    }
    Atomics.store(c, b + NEXT, CLOSED);
    let spins = 0;
    for (;;) {
      const done = Atomics.load(c, b + DONE);
      if (done >= chunks) break;
      if (this.callerCanBlock && ++spins > 100000) Atomics.wait(c, b + DONE, done, 1);
    }
    if (Atomics.load(c, b + ERROR) !== 0) {
      Atomics.store(c, b + ERROR, 0);
      throw new LlmError('invalid-request', `WASM kernel ${name} failed on a helper thread (out-of-bounds buffer?)`, {
        details: { kernel: name, rows },
      });
    }
  }

  /** Stops and releases the helpers. */
  destroy(): void {
    const c = this.heap.i32;
    Atomics.store(c, this.ctrl + STOP, 1);
    Atomics.add(c, this.ctrl + GEN, 1);
    Atomics.notify(c, this.ctrl + GEN);
    for (const h of this.helpers) h.terminate();
    this.helpers.length = 0;
  }
}
