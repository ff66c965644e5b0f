/**
 * Row-parallel matvecs on helper threads sharing the kernels' memory: one compiled module is instantiated in every
 * helper (Node worker_threads, or Web Workers when the page is crossOriginIsolated) over the same shared
 * WebAssembly.Memory. A dispatch writes the kernel index and arguments to a control block in that memory, bumps a
 * generation counter and wakes the helpers (Atomics.notify); each runs its slice of rows, the calling thread runs
 * slice 0, then waits for the pending count to reach zero. Helpers spin briefly before sleeping (decode issues
 * hundreds of matvecs per token; a wake-up costs tens of µs). The caller never blocks with Atomics.wait where that is
 * forbidden (a browser's main thread): there it spins.
 */

import { LlmError } from '../../errors.js';
import { GEMV_NAMES, type GemvName } from './kernel-exports.js';
import { IS_NODE } from './loader.js';
import type { WasmHeap } from './wasm-heap.js';

// Control block layout, in i32 slots from its start.
const GEN = 0; // generation: +1 per dispatch (or stop)
const PENDING = 1; // helpers still running the current dispatch
const FN = 2; // index into GEMV_NAMES
const ARGS = 3; // 8 kernel arguments (r0/r1 are replaced by each thread's slice)
const ROWS = 11; // total rows to split
const THREADS = 12; // threads taking part, caller included
const STOP = 13; // non-zero: helpers exit
const ERROR = 14; // non-zero: a helper's kernel threw
const CTRL_SLOTS = 16;

/** Source of a helper thread (plain JS, runs as a Node eval worker or a Blob-URL Web Worker). */
const WORKER_SOURCE = `'use strict';
(function () {
  var port = null;
  if (typeof require === 'function') port = require('node:worker_threads').parentPort;
  function start(msg) {
    var inst = new WebAssembly.Instance(msg.module, { env: { memory: msg.memory } });
    var fns = msg.names.map(function (n) { return inst.exports[n]; });
    var c = new Int32Array(msg.memory.buffer);
    var base = msg.ctrlIndex, me = msg.threadIndex, spin = msg.spin, seen = 0;
    if (port) port.postMessage('ready'); else self.postMessage('ready');
    for (;;) {
      var g = Atomics.load(c, base + ${GEN}), spins = 0;
      while (g === seen) {
        if (++spins > spin) { Atomics.wait(c, base + ${GEN}, seen); spins = 0; }
        g = Atomics.load(c, base + ${GEN});
      }
      seen = g;
      if (Atomics.load(c, base + ${STOP}) !== 0) return;
      var rows = c[base + ${ROWS}], t = c[base + ${THREADS}];
      var r0 = Math.floor(rows * me / t), r1 = Math.floor(rows * (me + 1) / t);
      if (r1 > r0) {
        try {
          var a = base + ${ARGS};
          fns[c[base + ${FN}]](c[a], c[a + 1], c[a + 2], c[a + 3], r0, r1, c[a + 6], c[a + 7]);
        } catch (e) { Atomics.store(c, base + ${ERROR}, 1); }
      }
      if (Atomics.sub(c, base + ${PENDING}, 1) === 1) Atomics.notify(c, base + ${PENDING});
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

async function startHelper(onMessage: (m: unknown) => void, onError: (e: unknown) => void): Promise<Helper & { post(m: unknown): void }> {
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
  static async create(module: WebAssembly.Module, heap: WasmHeap, nThreads: number, spin = 20000): Promise<ThreadPool> {
    const region = heap.alloc(CTRL_SLOTS * 4, 'thread control block');
    const ctrlIndex = region.byteOffset >> 2;
    const helpers: Helper[] = [];
    const ready: Promise<void>[] = [];
    try {
      for (let i = 1; i < nThreads; i++) {
        let resolve!: () => void;
        let reject!: (e: unknown) => void;
        ready.push(new Promise<void>((res, rej) => ((resolve = res), (reject = rej))));
        const h = await startHelper((m) => m === 'ready' && resolve(), reject);
        helpers.push(h);
        h.post({ module, memory: heap.memory, ctrlIndex, threadIndex: i, names: GEMV_NAMES, spin });
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
   * Runs `kernel` over rows 0 … rows−1 split across all threads; `run(r0, r1)` is the caller's own slice.
   * Returns after every thread has finished.
   */
  dispatch(name: GemvName, args: readonly number[], rows: number, run: (r0: number, r1: number) => void): void {
    const c = this.heap.i32;
    const b = this.ctrl;
    const t = this.nThreads;
    c[b + FN] = GEMV_NAMES.indexOf(name);
    for (let i = 0; i < 8; i++) c[b + ARGS + i] = args[i];
    c[b + ROWS] = rows;
    c[b + THREADS] = t;
    Atomics.store(c, b + PENDING, t - 1);
    Atomics.add(c, b + GEN, 1);
    Atomics.notify(c, b + GEN);
    const r1 = Math.floor(rows / t);
    if (r1 > 0) run(0, r1);
    let spins = 0;
    for (;;) {
      const p = Atomics.load(c, b + PENDING);
      if (p === 0) break;
      if (this.callerCanBlock && ++spins > 200000) Atomics.wait(c, b + PENDING, p, 1);
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
