/**
 * Loading a model from the IndexedDB model store (issue 20): `createEngine` checks each stored chunk against its
 * recorded sha256 as the load reads it — every chunk read from IndexedDB once, no separate verify pass — and a chunk
 * whose bytes changed ends the load with the integrity error (`details.reason: 'checksum-mismatch'`), serving nothing
 * and marking the chunk for refetch; the next download fetches just it and the model loads again.
 */

import 'fake-indexeddb/auto';
import { readFileSync } from 'node:fs';
import { createStore, get, set } from 'idb-keyval';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/api/create-engine.js';
import { downloadModel } from '../../../src/io/model-download.js';
import { chunkKey, readManifest } from '../../../src/io/model-store.js';
import { type FaultServer, startFaultServer } from '../../helpers/fault-server.js';
import { llmError } from '../../helpers/llm-error.js';
import { storedChunkBytes } from '../../helpers/stored-chunk.js';
import { sharedPath } from '../../helpers/shared-path.js';

const PATH = '/models/stories260K-streamed.gguf';
const FIXTURE = new Uint8Array(readFileSync(sharedPath('models', 'stories260K.gguf')));
/** 512 KiB: the header parse's first 1 MiB read takes chunks 0–1, which the source keeps for the tensor reads. */
const CHUNK = 512 * 1024;
const N_CHUNKS = Math.ceil(FIXTURE.byteLength / CHUNK);
/** The default model store createEngine uses. */
const store = createStore('webgguf', 'models');

let server: FaultServer;
let url: string;
beforeAll(async () => {
  server = await startFaultServer();
  server.replaceFile(PATH, FIXTURE);
  url = server.url(PATH);
});
afterAll(async () => {
  await server.close();
});

/** Chunk indexes of `url` read from IndexedDB while `f` runs (object-store gets, by key). */
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

describe('createEngine from the model store', () => {
  it('reads and checks every chunk once; a damaged chunk fails the load with the integrity error', async () => {
    await downloadModel(url, { chunkBytes: CHUNK, retryDelayMs: 1 });
    const phases: string[] = [];
    const reads = await chunkReads(async () => {
      const engine = await createEngine({
        model: url,
        backend: 'wasm',
        threads: 1,
        contextLength: 32,
        onProgress: (p) => phases.push(p.phase),
      });
      await engine.unload();
    });
    expect(phases).toContain('upload');
    expect(reads).toEqual([...Array(N_CHUNKS).keys()]); // each chunk once, in order: no separate verify pass

    // One byte of a tensor-data chunk (past the header's first read) changes in the store: the load meets it, stops.
    const damaged = N_CHUNKS - 1;
    const bytes = await storedChunkBytes(await get(chunkKey(url, damaged), store));
    bytes[100] ^= 0x40;
    await set(chunkKey(url, damaged), bytes, store);
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
    expect(e.code).toBe('network');
    expect(e.details?.reason).toBe('checksum-mismatch');
    expect(e.details?.chunk).toBe(damaged);
    expect(served).not.toContain('ready');
    expect((await readManifest(url))?.chunkPresent[damaged]).toBe(false);

    // The next open downloads just that chunk again and the model loads.
    server.clearLog();
    const engine = await createEngine({ model: url, backend: 'wasm', threads: 1, contextLength: 32 });
    const ranges = server.requestsFor(PATH).map((r) => r.range ?? '');
    // A probe of the file's first bytes, then the damaged chunk only.
    expect(ranges.filter((r) => !r.startsWith('bytes=0-'))).toEqual([
      `bytes=${damaged * CHUNK}-${FIXTURE.byteLength - 1}`,
    ]);
    await engine.unload();
  }, 60_000);
});
