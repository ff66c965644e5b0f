/**
 * The IndexedDB model store on fake-indexeddb, downloading from the fault-injecting server: full download, zero-request
 * reuse, resume after an interruption fetching exactly the missing chunks, list/delete/usage, quota errors (estimate and
 * QuotaExceededError) leaving a consistent entry, stale or changing ETags discarding old chunks, sha256 verification,
 * and never serving an incomplete or damaged entry.
 */

import 'fake-indexeddb/auto';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type UseStore, createStore, del, get, set } from 'idb-keyval';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LlmError } from '../../../src/errors.js';
import type { DownloadProgress } from '../../../src/io/download-progress.js';
import { IdbByteSource } from '../../../src/io/idb-byte-source.js';
import { type DownloadModelOptions, downloadModel } from '../../../src/io/model-download.js';
import {
  chunkKey,
  deleteModel,
  listModels,
  readChunk,
  readManifest,
  storageUsage,
} from '../../../src/io/model-store.js';
import { type FaultServer, startFaultServer } from '../../helpers/fault-server.js';
import { llmError } from '../../helpers/llm-error.js';
import { sharedPath } from '../../helpers/shared-path.js';

const PATH = '/models/stories260K.gguf';
const FIXTURE = new Uint8Array(readFileSync(sharedPath('models', 'stories260K.gguf')));
const CHUNK = 128 * 1024;
const N_CHUNKS = Math.ceil(FIXTURE.byteLength / CHUNK);
const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

let server: FaultServer;
let url: string;
let store: UseStore;
let storeCount = 0;

beforeAll(async () => {
  server = await startFaultServer();
  url = server.url(PATH);
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  store = createStore(`webgguf-test-${++storeCount}`, 'models');
  server.setFault(PATH, undefined);
  server.replaceFile(PATH, FIXTURE);
  await server.idle(); // stragglers of an earlier test's aborted requests stay out of this test's log
  server.clearLog();
});

const opts = (extra: DownloadModelOptions = {}): DownloadModelOptions => ({
  store,
  chunkBytes: CHUNK,
  retryDelayMs: 1,
  maxInFlight: 2,
  ...extra,
});

async function readBack(): Promise<Uint8Array> {
  const source = await IdbByteSource.open(url, { store });
  return source.read(0, source.size);
}

/** Chunk index requested by a logged `bytes=a-b` range. */
const chunkOf = (range: string | null): number => Number(/bytes=(\d+)-/.exec(range ?? '')?.[1]) / CHUNK;

/** Downloads until `chunks` chunks worth of bytes arrived, then aborts; resolves with the abort error. */
async function interruptAfter(chunks: number): Promise<LlmError> {
  const controller = new AbortController();
  const onProgress = (p: DownloadProgress): void => {
    if (p.phase === 'download' && p.loadedBytes >= chunks * CHUNK) controller.abort();
  };
  const e = await llmError(downloadModel(url, opts({ signal: controller.signal, onProgress })));
  await server.idle(); // requests sent just before the abort must not land in the next step's log
  return e;
}

describe('model store', () => {
  it('downloads into chunks, then serves the file with no network request', async () => {
    const phases: string[] = [];
    const m = await downloadModel(url, opts({ onProgress: (p) => phases.push(p.phase) }));
    expect(m.complete).toBe(true);
    expect(m.chunkPresent).toHaveLength(N_CHUNKS);
    expect(m.etag).not.toBeNull();
    expect(server.requestsFor(PATH)).toHaveLength(1 + N_CHUNKS);
    server.clearLog();
    expect(sha(await readBack())).toBe(sha(FIXTURE));
    const again = await downloadModel(url, opts({ onProgress: (p) => phases.push(p.phase) }));
    expect(again.complete).toBe(true);
    expect(phases.at(-1)).toBe('cached');
    expect(server.requests).toHaveLength(0);
  });

  it('IdbByteSource reads ranges across chunk boundaries and rejects out-of-range reads', async () => {
    await downloadModel(url, opts());
    const source = await IdbByteSource.open(url, { store });
    for (const [offset, length] of [
      [0, 0],
      [CHUNK - 3, 6],
      [5, 3 * CHUNK + 11],
      [FIXTURE.byteLength - 9, 9],
    ]) {
      expect(sha(await source.read(offset, length))).toBe(sha(FIXTURE.subarray(offset, offset + length)));
    }
    expect((await llmError(source.read(FIXTURE.byteLength, 1))).code).toBe('gguf-invalid');
  });

  it('IdbByteSource frees chunks it drops, never bytes it handed out', async () => {
    await downloadModel(url, opts());
    const source = await IdbByteSource.open(url, { store, readAhead: 2 });
    const first = await source.read(10, 100); // from chunk 0
    const held: Uint8Array[] = [];
    for (let i = 0; i < N_CHUNKS; i++) held.push(await source.read(i * CHUNK, 64)); // chunk 0 is dropped on the way
    expect(first).toEqual(FIXTURE.subarray(10, 110));
    for (let i = 0; i < N_CHUNKS; i++) expect(held[i]).toEqual(FIXTURE.subarray(i * CHUNK, i * CHUNK + 64));
    expect(await source.read(20, 8)).toEqual(FIXTURE.subarray(20, 28)); // read again from the store
    await source.close();
  });

  it('resumes an interrupted download fetching only the missing chunks', async () => {
    expect((await interruptAfter(4)).code).toBe('aborted');
    const partial = await readManifest(url, { store });
    expect(partial?.complete).toBe(false);
    const stored = partial!.chunkPresent.flatMap((p, i) => (p ? [i] : []));
    expect(stored.length).toBeGreaterThanOrEqual(2);
    expect(stored.length).toBeLessThan(N_CHUNKS);
    for (const i of stored) expect((await readChunk(url, i, { store }))?.byteLength).toBe(CHUNK);
    expect((await llmError(IdbByteSource.open(url, { store }))).code).toBe('invalid-request');

    server.clearLog();
    await downloadModel(url, opts());
    const [probe, ...rest] = server.requestsFor(PATH);
    expect(probe.range).toBe('bytes=0-0');
    const fetched = rest.map((r) => chunkOf(r.range)).sort((a, b) => a - b);
    const missing = partial!.chunkPresent.flatMap((p, i) => (p ? [] : [i]));
    expect(fetched).toEqual(missing);
    expect(sha(await readBack())).toBe(sha(FIXTURE));
  });

  it('lists, measures and deletes entries', async () => {
    await downloadModel(url, opts());
    const other = server.url('/models/derived/stories260K-q4_0.gguf');
    await interruptAfter(0).catch(() => undefined);
    await downloadModel(other, opts());
    const list = await listModels({ store });
    expect(list.map((m) => m.url).sort()).toEqual([url, other].sort());
    const usage = await storageUsage({ store, storage: { estimate: async () => ({ usage: 5, quota: 10 }) } });
    expect(usage.modelCount).toBe(2);
    expect(usage.storedBytes).toBe(FIXTURE.byteLength + 277_024);
    expect([usage.usageBytes, usage.quotaBytes]).toEqual([5, 10]);
    expect(await deleteModel(url, { store })).toBe(true);
    expect(await deleteModel(url, { store })).toBe(false);
    expect((await listModels({ store })).map((m) => m.url)).toEqual([other]);
    expect(await readChunk(url, 0, { store })).toBeUndefined();
    expect((await llmError(IdbByteSource.open(url, { store }))).code).toBe('invalid-request');
  });

  it('refuses to start when navigator.storage.estimate() says the file will not fit', async () => {
    const storage = { estimate: async () => ({ usage: 600_000, quota: 1_000_000 }) };
    const e = await llmError(downloadModel(url, opts({ storage })));
    expect(e.code).toBe('storage-quota');
    expect(e.details).toMatchObject({ neededBytes: FIXTURE.byteLength, availableBytes: 400_000 });
    expect(server.requestsFor(PATH)).toHaveLength(1); // the probe only: no chunk was fetched
  });

  it('turns QuotaExceededError while writing into storage-quota and keeps the entry consistent', async () => {
    const base = store;
    let chunkPuts = 0;
    const quotaStore: UseStore = (mode, callback) => {
      let isRefused = false;
      const run = base(mode, (s) => {
        const put = s.put.bind(s);
        s.put = (value: unknown, key?: IDBValidKey) => {
          if (Array.isArray(key) && key[0] === 'chunk' && ++chunkPuts > 3) {
            isRefused = true;
            s.transaction.abort();
          }
          return put(value, key);
        };
        return callback(s);
      });
      return run.catch((e: unknown) => {
        throw isRefused ? new DOMException('The quota has been exceeded.', 'QuotaExceededError') : e;
      });
    };
    const e = await llmError(downloadModel(url, opts({ store: quotaStore, maxInFlight: 1 })));
    expect(e.code).toBe('storage-quota');
    expect(e.details?.neededBytes).toBe(FIXTURE.byteLength - 3 * CHUNK);
    const m = await readManifest(url, { store });
    expect(m?.complete).toBe(false);
    for (let i = 0; i < N_CHUNKS; i++) {
      const chunk = await readChunk(url, i, { store });
      expect(chunk !== undefined).toBe(m!.chunkPresent[i]);
    }
    expect(m!.chunkPresent.filter(Boolean)).toHaveLength(3);
    expect((await llmError(IdbByteSource.open(url, { store }))).code).toBe('invalid-request');
  });

  it('an IndexedDB that cannot open (e.g. a private window) is a clear network error, not a raw DOMException', async () => {
    const broken: UseStore = () =>
      Promise.reject(new DOMException('The database connection is closing.', 'InvalidStateError'));
    const e = await llmError(downloadModel(url, opts({ store: broken })));
    expect(e.code).toBe('network');
    expect(e.message).toContain('InvalidStateError');
    expect(e.message).toContain('cache: false');
    expect((await llmError(IdbByteSource.open(url, { store: broken }))).code).toBe('network');
  });

  it('discards a partial entry whose ETag no longer matches the server and restarts', async () => {
    await interruptAfter(3);
    const changed = FIXTURE.map((b) => b ^ 0x33);
    server.replaceFile(PATH, changed);
    server.clearLog();
    const phases: string[] = [];
    const m = await downloadModel(url, opts({ onProgress: (p) => phases.push(p.phase) }));
    expect(phases).toContain('restart');
    expect(m.etag).toBe(server.requestsFor(PATH).at(-1)?.ifRange);
    expect(server.requestsFor(PATH)).toHaveLength(1 + N_CHUNKS);
    expect(sha(await readBack())).toBe(sha(changed));
  });

  it('restarts cleanly when the file changes on the server mid-download (never mixes versions)', async () => {
    const changed = FIXTURE.map((b) => b ^ 0x77);
    let isChanged = false;
    const phases: string[] = [];
    const m = await downloadModel(
      url,
      opts({
        onProgress: (p) => {
          phases.push(p.phase);
          if (!isChanged && p.phase === 'download' && p.loadedBytes >= 3 * CHUNK) {
            isChanged = true;
            server.replaceFile(PATH, changed);
          }
        },
      }),
    );
    expect(isChanged).toBe(true);
    expect(phases).toContain('restart');
    expect(m.complete).toBe(true);
    expect(sha(await readBack())).toBe(sha(changed));
  });

  it('verifies a known sha256 and deletes the entry on mismatch', async () => {
    const phases: string[] = [];
    const ok = await downloadModel(
      url,
      opts({ sha256: sha(FIXTURE).toUpperCase(), onProgress: (p) => phases.push(p.phase) }),
    );
    expect(ok.sha256).toBe(sha(FIXTURE));
    expect(phases).toContain('verify');
    await deleteModel(url, { store });
    const e = await llmError(downloadModel(url, opts({ sha256: '0'.repeat(64) })));
    expect(e.code).toBe('network');
    expect(e.message).toContain('sha256');
    expect(await readManifest(url, { store })).toBeUndefined();
  });

  it('a chunk lost from a complete entry is never served; the next download refetches just it', async () => {
    await downloadModel(url, opts());
    await del(chunkKey(url, 3), store);
    const source = await IdbByteSource.open(url, { store, verify: 'read' });
    const e = await llmError(source.read(0, source.size));
    expect(e.code).toBe('network');
    expect((await readManifest(url, { store }))?.complete).toBe(false);
    await downloadModel(url, opts());
    await del(chunkKey(url, 3), store);
    expect((await llmError(IdbByteSource.open(url, { store }))).details?.reason).toBe('checksum-mismatch');
    expect((await readManifest(url, { store }))?.complete).toBe(false);
    server.clearLog();
    await downloadModel(url, opts());
    expect(
      server
        .requestsFor(PATH)
        .slice(1)
        .map((r) => chunkOf(r.range)),
    ).toEqual([3]);
    expect(sha(await readBack())).toBe(sha(FIXTURE));
  });

  it('stores the file from a server that ignores Range (one full-body request)', async () => {
    server.setFault(PATH, { ignoreRange: true });
    await downloadModel(url, opts());
    expect(server.requestsFor(PATH)).toHaveLength(1);
    expect(sha(await readBack())).toBe(sha(FIXTURE));
  });

  it('survives dropped connections while downloading', async () => {
    server.setFault(PATH, { skip: 1, times: 5, dropAfterBytes: 40_000 });
    await downloadModel(url, opts());
    expect(sha(await readBack())).toBe(sha(FIXTURE));
  });

  it('stores chunks as Blobs and still reads chunks stored as ArrayBuffers or views (older versions)', async () => {
    await downloadModel(url, opts());
    for (let i = 0; i < N_CHUNKS; i++) expect(await get(chunkKey(url, i), store)).toBeInstanceOf(Blob);
    const chunk = (i: number) => FIXTURE.slice(i * CHUNK, Math.min(FIXTURE.byteLength, (i + 1) * CHUNK));
    expect(await readChunk(url, 1, { store })).toEqual(chunk(1));
    await set(chunkKey(url, 0), chunk(0).buffer, store); // as versions before Blobs stored them
    await set(chunkKey(url, 2), chunk(2), store);
    expect(await readChunk(url, 0, { store })).toEqual(chunk(0));
    expect(await readChunk(url, 2, { store })).toEqual(chunk(2));
    const source = await IdbByteSource.open(url, { store }); // each chunk checked against its recorded sha256
    expect(sha(await source.read(0, source.size))).toBe(sha(FIXTURE));
  });

  // Last: a refusal switches this module to ArrayBuffers for the rest of the process.
  it('a store that refuses Blob values gets the chunks as ArrayBuffers, from the first refusal on', async () => {
    const proto = IDBObjectStore.prototype;
    const put = proto.put;
    let refused = 0;
    proto.put = function (this: IDBObjectStore, value: unknown, key?: IDBValidKey) {
      if (value instanceof Blob) {
        refused++;
        throw new DOMException('Error preparing Blob/File data to be stored in object store', 'UnknownError');
      }
      return put.call(this, value, key);
    };
    try {
      await downloadModel(url, opts());
    } finally {
      proto.put = put;
    }
    expect(refused).toBeGreaterThanOrEqual(1);
    expect(refused).toBeLessThanOrEqual(2); // the writes in flight (maxInFlight 2) when the first was refused
    for (let i = 0; i < N_CHUNKS; i++) expect(await get(chunkKey(url, i), store)).toBeInstanceOf(ArrayBuffer);
    expect(sha(await readBack())).toBe(sha(FIXTURE));
  });
});
