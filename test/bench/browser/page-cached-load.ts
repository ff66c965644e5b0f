/**
 * The bench page's cached-load steps (issue 20), from the IndexedDB model store: `storeModel` stores the model once
 * from the local server; each measurement then runs in a fresh page (test/bench/browser-cached-load.ts) and either
 * reads every stored byte back through the store's own chunk reader (`read`: what the store alone costs) or runs
 * `createEngine` on the URL until ready (`ready`: header parse, tokenizer, weights streamed from the store with each
 * chunk's sha256 checked as it is read, warmup).
 */

import { createEngine } from '../../../src/api/create-engine.js';
import { downloadModel } from '../../../src/io/model-download.js';
import { IdbByteSource, LOAD_READ_AHEAD } from '../../../src/io/idb-byte-source.js';
import { openChunkReader } from '../../../src/io/idb-chunk-reader.js';
import { readChunk, readManifest } from '../../../src/io/model-store.js';

/** What one page step reports (the page has no RSS or CPU time: the driver measures the processes). */
export interface PageCachedLoadRun {
  readonly mode: 'read' | 'ready';
  readonly backend: string;
  readonly ms: number;
  readonly cpuMs: number;
  readonly bytes: number;
  readonly rssBeforeMiB: number;
  readonly rssGrowthMiB: number;
  readonly loadMs?: number;
  readonly warmupMs?: number;
  /** `ready`: ms from the start to the first progress event of each phase (parse, upload, warmup, ready). */
  readonly phaseStartMs?: Record<string, number>;
}

/** Stores the model at `url` in the default model store (a no-op once it is complete); resolves with its size. */
export async function storeModel(url: string): Promise<number> {
  const m = await downloadModel(url);
  return m.size;
}

/** One cached-load step on a model already stored by `storeModel`. */
export async function cachedLoad(
  url: string,
  mode: 'read' | 'ready',
  backend: 'wasm' | 'webgpu',
  threads: number,
  readVia: 'worker' | 'main' | 'stream' = 'worker',
): Promise<PageCachedLoadRun> {
  const m = await readManifest(url);
  if (!m?.complete) throw new Error(`${url} is not stored: call storeModel first`);
  // The backend's chunk is fetched and compiled before the clock (a page would have it cached after a first visit).
  if (mode === 'ready' && backend === 'wasm') await import('../../../src/backend/wasm/index.js');
  const t0 = performance.now();
  let extra = {};
  if (mode === 'read' && readVia === 'stream') {
    // Diagnostic: the load's own source (verify as read, the load's read-ahead) streamed into one 4 MiB buffer.
    (globalThis as unknown as { __noW?: boolean }).__noW = location.hash === '#now';
    const src = await IdbByteSource.open(url, { verify: 'read', readAhead: LOAD_READ_AHEAD });
    const buf = new Uint8Array(4 << 20);
    for (let at = 0; at < src.size; at += buf.byteLength)
      await src.readInto(at, buf.subarray(0, Math.min(buf.byteLength, src.size - at)));
    await src.close();
  } else if (mode === 'read' && readVia === 'main') {
    for (let i = 0; i < m.chunkPresent.length; i++) await readChunk(url, i); // one after another, on this thread
  } else if (mode === 'read') {
    // The store's fastest plain read: the same chunk reader the load uses (a worker where one runs), as many chunks
    // in flight as the load keeps (the one consumed + LOAD_READ_AHEAD), no hashing, nothing done with the bytes.
    const reader = openChunkReader({});
    const inFlight: Promise<unknown>[] = [];
    for (let i = 0; i < m.chunkPresent.length; i++) {
      inFlight.push(reader.read(url, i, false));
      if (inFlight.length > LOAD_READ_AHEAD) await inFlight.shift();
    }
    await Promise.all(inFlight);
    reader.close();
  } else {
    const at: Record<string, number> = {};
    const engine = await createEngine({
      model: url,
      backend,
      threads,
      persistedCache: false,
      onProgress: (p) => {
        at[p.phase] ??= performance.now() - t0; // first event of each phase
      },
    });
    const stats = await engine.stats();
    extra = { loadMs: stats.loadMs, warmupMs: stats.warmupMs, phaseStartMs: at };
    const ms = performance.now() - t0;
    await engine.unload();
    return {
      mode,
      backend,
      ms,
      cpuMs: ms,
      bytes: m.size,
      rssBeforeMiB: Number.NaN,
      rssGrowthMiB: Number.NaN,
      ...extra,
    };
  }
  const ms = performance.now() - t0;
  return { mode, backend, ms, cpuMs: ms, bytes: m.size, rssBeforeMiB: Number.NaN, rssGrowthMiB: Number.NaN, ...extra };
}
