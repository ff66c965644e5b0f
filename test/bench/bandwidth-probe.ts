/**
 * Memory-bandwidth probe: a hand-assembled WASM-SIMD loop that streams a buffer in shared linear memory (four
 * independent v128 accumulators, 64 bytes per iteration), run on 1…N threads (worker_threads, each reading its own
 * slice). Its GB/s is the roofline decode is compared against: bytes read per token ÷ time per token ÷ bandwidth.
 * Each repeat is timed by wall clock and by process CPU time; on a shared machine the streaming threads are often
 * descheduled, which makes wall time read the machine low (17.6 GB/s at load 2 where the loop streams 27.5 GB per
 * CPU-second), and a low roofline flatters decode. So a repeat's time is its CPU time ÷ threads (never more than its
 * wall time), and the best repeat counts.
 */

import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { round, type BandwidthResult } from './bench-types.js';

/**
 * (module (import "env" "memory" (memory 1 65536 shared))
 *   (func (export "sum") (param $p i32) (param $end i32) (result i32) (local v128 v128 v128 v128)
 *     loop: acc_i += i32x4(load(p + 16·i)) for i in 0..3; p += 64; br_if p < end
 *     return lane 0 of (acc0 ^ acc1 ^ acc2 ^ acc3)))
 */
function streamModuleBytes(): Uint8Array<ArrayBuffer> {
  const acc = (local: number, offset: number): number[] => [
    0x20,
    local,
    0x20,
    0x00,
    0xfd,
    0x00,
    0x04,
    offset,
    0xfd,
    0xae,
    0x01,
    0x21,
    local,
  ];
  const body = [
    0x01,
    0x04,
    0x7b, // 4 locals of v128 (indices 2..5)
    0x03,
    0x40, // loop
    ...acc(2, 0x00),
    ...acc(3, 0x10),
    ...acc(4, 0x20),
    ...acc(5, 0x30),
    0x20,
    0x00,
    0x41,
    0xc0,
    0x00,
    0x6a,
    0x22,
    0x00, // p = p + 64 (tee)
    0x20,
    0x01,
    0x49,
    0x0d,
    0x00, // br_if 0 (p < end)
    0x0b, // end loop
    0x20,
    0x02,
    0x20,
    0x03,
    0xfd,
    0x51,
    0x20,
    0x04,
    0xfd,
    0x51,
    0x20,
    0x05,
    0xfd,
    0x51,
    0xfd,
    0x1b,
    0x00,
    0x0b, // end func
  ];
  const section = (id: number, content: number[]): number[] => [id, ...leb(content.length), ...content];
  return Uint8Array.from([
    0x00,
    0x61,
    0x73,
    0x6d,
    0x01,
    0x00,
    0x00,
    0x00,
    ...section(1, [0x01, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f]),
    ...section(
      2,
      [0x01, 0x03, 0x65, 0x6e, 0x76, 0x06, 0x6d, 0x65, 0x6d, 0x6f, 0x72, 0x79, 0x02, 0x03, 0x01, 0x80, 0x80, 0x04],
    ),
    ...section(3, [0x01, 0x00]),
    ...section(7, [0x01, 0x03, 0x73, 0x75, 0x6d, 0x00, 0x00]),
    ...section(10, [0x01, ...leb(body.length), ...body]),
  ]);
}

function leb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
}

/** Worker body: instantiate on the shared memory, then on each message stream [p, end) `passes` times. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const inst = new WebAssembly.Instance(workerData.module, { env: { memory: workerData.memory } });
parentPort.on('message', (m) => {
  let x = 0;
  for (let i = 0; i < m.passes; i++) x ^= inst.exports.sum(m.p, m.end);
  parentPort.postMessage(x);
});
`;

/** Options of `probeBandwidth`. */
export interface BandwidthOptions {
  /** Bytes streamed per pass (default 256 MiB; must be a multiple of 64·threads). */
  readonly bytes?: number;
  /** Thread counts to measure (default [1, 2]). */
  readonly threads?: readonly number[];
  /** Timed repeats per thread count; the best is kept (default 5). */
  readonly repeats?: number;
  /** Passes over the buffer per repeat (default 3). */
  readonly passes?: number;
}

/** Measures streaming-read GB/s of WASM SIMD at each thread count. */
export async function probeBandwidth(options: BandwidthOptions = {}): Promise<BandwidthResult> {
  const bytes = options.bytes ?? 256 * 2 ** 20;
  const threadCounts = options.threads ?? [1, 2];
  const repeats = options.repeats ?? 5;
  const passes = options.passes ?? 3;
  const loadAvg = os.loadavg()[0];
  const module = new WebAssembly.Module(streamModuleBytes());
  const pages = Math.ceil((bytes + 65536) / 65536);
  const memory = new WebAssembly.Memory({ initial: pages, maximum: 65536, shared: true });
  new Uint8Array(memory.buffer).fill(1, 65536, 65536 + bytes); // touch every page so timing excludes first faults
  const gbPerS: Record<string, number> = {};
  const maxThreads = Math.max(...threadCounts);
  const workers = Array.from(
    { length: maxThreads },
    () => new Worker(WORKER_SOURCE, { eval: true, workerData: { module, memory } }),
  );
  try {
    const ask = (w: Worker, p: number, end: number, n: number): Promise<number> =>
      new Promise((resolve, reject) => {
        const onError = (e: Error): void => reject(e);
        w.once('error', onError);
        w.once('message', (x: number) => {
          w.off('error', onError);
          resolve(x);
        });
        w.postMessage({ p, end, passes: n });
      });
    for (const t of threadCounts) {
      const slice = Math.floor(bytes / t / 64) * 64;
      const run = (n: number): Promise<number[]> =>
        Promise.all(workers.slice(0, t).map((w, i) => ask(w, 65536 + i * slice, 65536 + (i + 1) * slice, n)));
      await run(1); // warm-up (tier-up, caches)
      let best = Infinity;
      for (let r = 0; r < repeats; r++) {
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        await run(passes);
        const wall = (performance.now() - t0) / 1000;
        const c = process.cpuUsage(c0);
        const running = (c.user + c.system) / 1e6 / t; // seconds each thread actually ran (CPU time of the process)
        best = Math.min(best, running > 0 ? Math.min(wall, running) : wall);
      }
      gbPerS[String(t)] = round((slice * t * passes) / best / 1e9, 2);
    }
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
  return { bytes, gbPerS, loadAvg: round(loadAvg) };
}
