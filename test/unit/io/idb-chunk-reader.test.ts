/**
 * The chunk worker of the IndexedDB model store (issue 20): its script, run here over fake-indexeddb by a stand-in
 * `Worker` (same messages, transfers as plain passes), returns every stored chunk with the right sha256, is replaced
 * after a few values decoded from the store (so its heap is freed; Blob-stored chunks leave nothing there, one worker
 * serves them all) and ended at close; a worker that errors or cannot start leaves the
 * reads to the calling thread with the same results. Through `IdbByteSource` and `createEngine` the worker path
 * keeps the guarantees of the store: a model load reads each chunk once (read-ahead from the first read), a damaged
 * chunk fails the load with the integrity error and is marked for refetch, and an abort mid-load stops it.
 */

import 'fake-indexeddb/auto';
import { readFileSync } from 'node:fs';
import { createStore, get, set } from 'idb-keyval';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/api/create-engine.js';
import { IdbByteSource } from '../../../src/io/idb-byte-source.js';
import { CHUNK_WORKER_SOURCE, openChunkReader, type WorkerLike } from '../../../src/io/idb-chunk-reader.js';
import { downloadModel } from '../../../src/io/model-download.js';
import { chunkKey, manifestKey, readManifest } from '../../../src/io/model-store.js';
import { chunkSum } from '../../../src/io/chunk-sum.js';
import { sha256Hex } from '../../../src/io/sha256.js';
import { type FaultServer, startFaultServer } from '../../helpers/fault-server.js';
import { llmError } from '../../helpers/llm-error.js';
import { storedChunkBytes } from '../../helpers/stored-chunk.js';
import { sharedPath } from '../../helpers/shared-path.js';

const PATH = '/models/stories260K-chunk-worker.gguf';
const FIXTURE = new Uint8Array(readFileSync(sharedPath('models', 'stories260K.gguf')));
const CHUNK = 64 * 1024;
const N_CHUNKS = Math.ceil(FIXTURE.byteLength / CHUNK);
const store = createStore('webgguf', 'models');

/** Workers started by the stand-in, with their read requests, buffers handed in to free, and whether they were ended. */
const started: { messages: number; freed: number; terminated: boolean }[] = [];

/** Runs the worker script in this thread: `self`, `indexedDB` and `crypto` are handed in, messages go via timers. */
function startScript(reply?: (m: { id: number }) => unknown): WorkerLike {
  const record = { messages: 0, freed: 0, terminated: false };
  started.push(record);
  const scope: { onmessage: ((e: { data: unknown }) => void) | null; postMessage(m: unknown): void } = {
    onmessage: null,
    postMessage: (m) => setTimeout(() => !record.terminated && worker.onmessage?.({ data: m })),
  };
  const worker: WorkerLike = {
    onmessage: null,
    onerror: null,
    postMessage: (m) => {
      if ((m as { free?: unknown }).free !== undefined) record.freed++;
      else record.messages++;
      if (reply) setTimeout(() => worker.onmessage?.({ data: reply(m as { id: number }) }));
      else setTimeout(() => scope.onmessage?.({ data: m }));
    },
    terminate: () => {
      record.terminated = true;
    },
  };
  if (!reply) new Function('self', 'indexedDB', 'crypto', CHUNK_WORKER_SOURCE)(scope, indexedDB, globalThis.crypto);
  return worker;
}

/** A global `Worker` (what the library's own factory constructs from its blob: URL) running the script. */
class ScriptWorker {
  constructor() {
    // biome-ignore lint/correctness/noConstructorReturn: the stand-in is the started script
    return startScript() as unknown as ScriptWorker;
  }
}

/** Chunk indexes of `url` read from IndexedDB (by this thread or a stand-in worker) while `f` runs. */
async function chunkReads(f: () => Promise<unknown>): Promise<number[]> {
  const seen: number[] = [];
  const proto = IDBObjectStore.prototype;
  const original = proto.get;
  proto.get = function (this: IDBObjectStore, key: IDBValidKey | IDBKeyRange) {
    if (Array.isArray(key) && key[0] === 'chunk' && key[1] === url) seen.push(key[2] as number);
    return original.call(this, key);
  };
  try {
    await f();
  } finally {
    proto.get = original;
  }
  return seen;
}

let server: FaultServer;
let url: string;
beforeAll(async () => {
  server = await startFaultServer();
  server.replaceFile(PATH, FIXTURE);
  url = server.url(PATH);
  await downloadModel(url, { chunkBytes: CHUNK, retryDelayMs: 1 });
});
afterAll(async () => {
  await server.close();
});
afterEach(() => {
  started.length = 0;
  delete (globalThis as { Worker?: unknown }).Worker;
});

describe('chunk worker', () => {
  it('returns every stored chunk with its sha256 and is ended at close', async () => {
    const reader = openChunkReader({}, () => startScript());
    await new Promise((r) => setTimeout(r, 20)); // started: every read goes to a worker
    const reads = await Promise.all([...Array(N_CHUNKS).keys()].map((i) => reader.read(url, i, true)));
    for (const [i, r] of reads.entries()) {
      const want = FIXTURE.subarray(i * CHUNK, Math.min((i + 1) * CHUNK, FIXTURE.byteLength));
      expect(r.bytes).toEqual(want);
      expect(r.sha256).toBe(sha256Hex(want));
    }
    expect(started.length).toBe(1); // all asked at once, before any reply: one worker
    // The fast checksum a load checks, computed by the script's embedded copy, is the one recorded at download.
    const m = await readManifest(url);
    for (let i = 0; i < N_CHUNKS; i++) {
      const r = await reader.read(url, i, 'sum');
      expect(r.sum).toBe(chunkSum(FIXTURE.subarray(i * CHUNK, Math.min((i + 1) * CHUNK, FIXTURE.byteLength))));
      expect(r.sum).toBe(m?.chunkSums?.[i]);
      expect(r.sha256).toBeNull();
    }
    expect((await reader.read(url, N_CHUNKS + 5, false)).bytes).toBeUndefined(); // not stored
    reader.close();
    expect(started.every((w) => w.terminated)).toBe(true);
    await expect(reader.read(url, 0, false)).rejects.toThrow(/closed/);
  });

  it('one worker serves a whole read of Blob-stored chunks; chunks stored as ArrayBuffers get a new one every 4', async () => {
    const oneByOne = async (): Promise<void> => {
      const reader = openChunkReader({}, () => startScript());
      await new Promise((r) => setTimeout(r, 20));
      for (let i = 0; i < N_CHUNKS; i++) {
        const want = FIXTURE.subarray(i * CHUNK, Math.min((i + 1) * CHUNK, FIXTURE.byteLength));
        expect((await reader.read(url, i, true)).sha256).toBe(sha256Hex(want));
      }
      reader.close();
    };
    expect(await get(chunkKey(url, 1), store)).toBeInstanceOf(Blob); // as downloadModel stores them
    await oneByOne();
    expect(started.length).toBe(1); // nothing of a Blob's read stays in the worker: it is never replaced
    started.length = 0;
    for (let i = 0; i < N_CHUNKS; i++) {
      const bytes = await storedChunkBytes(await get(chunkKey(url, i), store));
      await set(chunkKey(url, i), bytes.slice().buffer, store); // an older version's stored form (same bytes)
    }
    await oneByOne();
    expect(started.length).toBe(Math.ceil(N_CHUNKS / 4)); // each worker decodes 4 values, then its heap is freed
    expect(started.slice(0, -1).every((w) => w.terminated && w.messages === 4)).toBe(true);
  });

  it('frees a released chunk on the worker (detached here), or here once the worker is gone', async () => {
    const reader = openChunkReader({}, () => startScript());
    await new Promise((r) => setTimeout(r, 20));
    const { bytes } = await reader.read(url, 1, false);
    const buffer = bytes!.buffer;
    const freedHere: ArrayBuffer[] = [];
    const originalPost = MessagePort.prototype.postMessage;
    MessagePort.prototype.postMessage = function (this: MessagePort, message: unknown, transfer?: unknown) {
      for (const t of Array.isArray(transfer) ? transfer : []) if (t instanceof ArrayBuffer) freedHere.push(t);
      return (originalPost as (m: unknown, t?: unknown) => void).call(this, message, transfer);
    } as typeof MessagePort.prototype.postMessage;
    try {
      reader.release(bytes!);
      expect(started[0].freed).toBe(1);
      await new Promise((r) => setTimeout(r, 20));
      expect(freedHere).toEqual([buffer]); // by the script, into its closed channel
      expect(buffer.byteLength).toBe(0);
      const view = new Uint8Array(8);
      reader.release(view.subarray(2)); // not its whole buffer: left alone
      expect(started[0].freed).toBe(1);
      reader.close();
      const late = new Uint8Array(16);
      reader.release(late); // no worker any more: freed on this thread
      expect(late.byteLength).toBe(0);
      expect(started[0].freed).toBe(1);
    } finally {
      MessagePort.prototype.postMessage = originalPost;
    }
  });

  it('a worker that fails a read or cannot run leaves the reads to this thread, with the same results', async () => {
    const failing = openChunkReader({}, () => startScript((m) => ({ id: m.id, error: 'UnknownError' })));
    await new Promise((r) => setTimeout(r, 20));
    const r = await failing.read(url, 1, true);
    expect(r.bytes).toEqual(FIXTURE.subarray(CHUNK, 2 * CHUNK));
    expect(r.sha256).toBe(sha256Hex(FIXTURE.subarray(CHUNK, 2 * CHUNK)));
    failing.close();

    const refused = openChunkReader({}, () => {
      const w = startScript((m) => ({ id: m.id, error: 'never answered' }));
      w.postMessage = () => setTimeout(() => w.onerror?.(new Error('CSP: blob: workers refused')));
      return w;
    });
    const both = await Promise.all([refused.read(url, 0, false), refused.read(url, 1, false)]);
    expect(both.map((x) => x.bytes)).toEqual([FIXTURE.subarray(0, CHUNK), FIXTURE.subarray(CHUNK, 2 * CHUNK)]);
    expect(started.at(-1)?.terminated).toBe(true);
    expect((await refused.read(url, 2, false)).bytes).toEqual(FIXTURE.subarray(2 * CHUNK, 3 * CHUNK));
    expect(started.length).toBe(2); // no new worker after the failure
    refused.close();

    expect(openChunkReader({ store }, () => startScript())).toBeDefined();
    expect(started.length).toBe(2); // a caller's own store is never read by a worker
  });
});

describe('IdbByteSource and createEngine over the chunk worker', () => {
  it('a load reads each chunk once, read ahead from the first read', async () => {
    (globalThis as { Worker?: unknown }).Worker = ScriptWorker;
    const src = await IdbByteSource.open(url, { verify: 'read', readAhead: 3 });
    const reads = await chunkReads(async () => {
      expect(await src.read(0, 16)).toEqual(FIXTURE.subarray(0, 16));
      await new Promise((r) => setTimeout(r, 50));
    });
    expect(reads).toEqual([0, 1, 2, 3]); // chunk 0 and three ahead, before anything else is asked for
    const all = new Uint8Array(FIXTURE.byteLength);
    const rest = await chunkReads(() => src.readInto(0, all));
    expect(all).toEqual(FIXTURE);
    expect([...reads, ...rest]).toEqual([...Array(N_CHUNKS).keys()]); // each once, in order
    expect(started.reduce((n, w) => n + w.messages, 0)).toBe(N_CHUNKS - 1); // all but the first (read here while
    // the chunk reader's module loads) in a worker
    // Every chunk the stream consumed was handed to the worker to free (the first one, read here, included).
    expect(started.reduce((n, w) => n + w.freed, 0)).toBe(N_CHUNKS);
    await src.close();
    expect(started.every((w) => w.terminated)).toBe(true);
  });

  it('a damaged chunk fails the load with the integrity error; an abort mid-load stops it', async () => {
    (globalThis as { Worker?: unknown }).Worker = ScriptWorker;
    const engine = await createEngine({ model: url, backend: 'wasm', threads: 1, contextLength: 32 });
    await engine.unload();
    expect(started.length).toBeGreaterThan(1);

    const ctrl = new AbortController();
    let uploads = 0;
    const aborted = await llmError(
      createEngine({
        model: url,
        backend: 'wasm',
        threads: 1,
        contextLength: 32,
        signal: ctrl.signal,
        onProgress: (p) => {
          if (p.phase === 'upload' && ++uploads === 2) ctrl.abort();
        },
      }),
    );
    expect(aborted.code).toBe('aborted');

    const damaged = N_CHUNKS - 2;
    const bytes = await storedChunkBytes(await get(chunkKey(url, damaged), store));
    bytes[7] ^= 0x01;
    await set(chunkKey(url, damaged), bytes.buffer, store);
    const served: string[] = [];
    const e = await llmError(
      createEngine({
        model: url,
        backend: 'wasm',
        threads: 1,
        contextLength: 32,
        onProgress: (p) => served.push(p.phase),
      }),
    );
    expect(e.details).toMatchObject({ reason: 'checksum-mismatch', chunk: damaged });
    expect(e.message).toMatch(/has checksum [0-9a-f]{32}, not the/); // checked by the fast sum recorded with it
    expect(served).not.toContain('ready');
    expect((await readManifest(url))?.chunkPresent[damaged]).toBe(false);
    expect(started.every((w) => w.terminated)).toBe(true);
  }, 60_000);

  it('an entry stored before fast checksums were recorded is checked by sha256', async () => {
    (globalThis as { Worker?: unknown }).Worker = ScriptWorker;
    await downloadModel(url, { chunkBytes: CHUNK, retryDelayMs: 1 }); // refetches what the test above damaged
    const m = await readManifest(url);
    expect(m?.complete).toBe(true);
    await set(manifestKey(url), { ...m, chunkSums: undefined }, store);
    const src = await IdbByteSource.open(url, { verify: 'read', readAhead: 2 });
    const all = new Uint8Array(FIXTURE.byteLength);
    await src.readInto(0, all);
    expect(all).toEqual(FIXTURE);
    await src.close();
    const bytes = await storedChunkBytes(await get(chunkKey(url, 2), store));
    bytes[3] ^= 0x10;
    await set(chunkKey(url, 2), bytes.buffer, store);
    const damaged = await IdbByteSource.open(url, { verify: 'read', readAhead: 2 });
    const e = await llmError(damaged.readInto(0, new Uint8Array(FIXTURE.byteLength)));
    expect(e.details).toMatchObject({ reason: 'checksum-mismatch', chunk: 2 });
    expect(e.message).toMatch(/has sha256 [0-9a-f]{64}, not the/);
    await damaged.close();
  }, 60_000);
});
