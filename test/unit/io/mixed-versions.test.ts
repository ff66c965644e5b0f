/**
 * Issue #21 item 3: a download never stores bytes of two versions of a file, and a stored copy is never served when
 * its bytes changed. Servers without validators (or with only a weak ETag), same-size replacements mid-download and
 * between sessions, redirects to a changing target, the caller's sha256 and `X-Linked-Etag` as the resume key, the
 * recorded sha256, and bytes tampered in IndexedDB (fake-indexeddb, fault-injecting server).
 */

import 'fake-indexeddb/auto';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type UseStore, createStore, get, set } from 'idb-keyval';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LlmError } from '../../../src/errors.js';
import type { DownloadProgress } from '../../../src/io/download-progress.js';
import { createEngine } from '../../../src/api/create-engine.js';
import { IdbByteSource } from '../../../src/io/idb-byte-source.js';
import { openModelSource } from '../../../src/io/index.js';
import { type DownloadModelOptions, downloadModel } from '../../../src/io/model-download.js';
import { type ModelManifest, chunkKey, manifestKey, readManifest } from '../../../src/io/model-store.js';
import { type FaultServer, startFaultServer } from '../../helpers/fault-server.js';
import { llmError } from '../../helpers/llm-error.js';
import { storedChunkBytes } from '../../helpers/stored-chunk.js';
import { sharedPath } from '../../helpers/shared-path.js';

const PATH = '/models/stories260K.gguf';
const FIXTURE = new Uint8Array(readFileSync(sharedPath('models', 'stories260K.gguf')));
const CHANGED = FIXTURE.map((b) => b ^ 0x5a); // another version of the same size
const CHUNK = 128 * 1024;
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
  store = createStore(`webgguf-mixed-${++storeCount}`, 'models');
  for (const p of [PATH, '/a.gguf', '/b.gguf']) server.setFault(p, undefined);
  server.setRedirect(PATH, undefined);
  server.replaceFile(PATH, FIXTURE);
  await server.idle();
  server.clearLog();
});

const opts = (extra: DownloadModelOptions = {}): DownloadModelOptions => ({
  store,
  chunkBytes: CHUNK,
  retryDelayMs: 1,
  maxInFlight: 2,
  ...extra,
});

/** A fetch that removes response headers, as a server or CORS without them would. */
function fetchWithout(...names: string[]): typeof fetch {
  return (async (input: RequestInfo | URL, init?: RequestInit) => {
    const res = await fetch(input, init);
    const headers = new Headers(res.headers);
    for (const n of names) headers.delete(n);
    return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
  }) as typeof fetch;
}

async function readBack(at = url): Promise<Uint8Array> {
  const source = await IdbByteSource.open(at, { store });
  return source.read(0, source.size);
}

/** Downloads until `bytes` were reported, then aborts. */
async function interruptAfter(bytes: number, extra: DownloadModelOptions = {}): Promise<LlmError> {
  const controller = new AbortController();
  const onProgress = (p: DownloadProgress): void => {
    if (p.phase === 'download' && p.loadedBytes >= bytes) controller.abort();
  };
  const e = await llmError(downloadModel(url, opts({ ...extra, signal: controller.signal, onProgress })));
  await server.idle();
  return e;
}

describe('no validators: one response, never mixed', () => {
  it('same-size replacement mid-download: the stored file is one whole version', async () => {
    server.setFault(PATH, { noValidators: true, trickle: { bytesPerWrite: 32 * 1024, delayMs: 2 } });
    let isReplaced = false;
    const m = await downloadModel(
      url,
      opts({
        onProgress: (p) => {
          if (!isReplaced && p.phase === 'download' && p.loadedBytes >= 3 * CHUNK) {
            isReplaced = true;
            server.replaceFile(PATH, CHANGED);
          }
        },
      }),
    );
    expect(isReplaced).toBe(true);
    const stored = sha(await readBack());
    expect([sha(FIXTURE), sha(CHANGED)]).toContain(stored);
    expect(m.sha256).toBe(stored);
    expect(server.requestsFor(PATH).map((r) => r.range)).toEqual(['bytes=0-0', 'bytes=0-']);
  });

  it('a weak ETag is no version key (nor, next to it, Last-Modified: RFC 9110 §13.1.5): one response', async () => {
    // The fault server's ETag is strong; a fetch wrapper weakens it, as some CDNs do.
    const weakFetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const res = await fetch(input, init);
      const headers = new Headers(res.headers);
      headers.set('etag', `W/${res.headers.get('etag')}`);
      return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
    }) as typeof fetch;
    await downloadModel(url, opts({ fetch: weakFetch }));
    expect(server.requestsFor(PATH).map((r) => r.range)).toEqual(['bytes=0-0', 'bytes=0-']);
    expect(server.requestsFor(PATH).every((r) => r.ifRange === null)).toBe(true);
    expect(sha(await readBack())).toBe(sha(FIXTURE));
  });

  it('302 to a target that changes mid-download: one whole version', async () => {
    server.replaceFile('/a.gguf', FIXTURE);
    server.replaceFile('/b.gguf', CHANGED);
    for (const p of ['/a.gguf', '/b.gguf'])
      server.setFault(p, { noValidators: true, trickle: { bytesPerWrite: 32 * 1024, delayMs: 2 } });
    server.setRedirect(PATH, '/a.gguf');
    let isSwitched = false;
    await downloadModel(
      url,
      opts({
        onProgress: (p) => {
          if (!isSwitched && p.phase === 'download' && p.loadedBytes >= 2 * CHUNK) {
            isSwitched = true;
            server.setRedirect(PATH, '/b.gguf');
          }
        },
      }),
    );
    expect(isSwitched).toBe(true);
    expect([sha(FIXTURE), sha(CHANGED)]).toContain(sha(await readBack()));
  });

  it('302 to a changing target with ETags: the change is detected and the download restarts on the new one', async () => {
    server.replaceFile('/a.gguf', FIXTURE);
    server.replaceFile('/b.gguf', CHANGED);
    server.setRedirect(PATH, '/a.gguf');
    let isSwitched = false;
    const phases: string[] = [];
    await downloadModel(
      url,
      opts({
        maxInFlight: 1,
        onProgress: (p) => {
          phases.push(p.phase);
          if (!isSwitched && p.phase === 'download' && p.loadedBytes >= 2 * CHUNK) {
            isSwitched = true;
            server.setRedirect(PATH, '/b.gguf');
          }
        },
      }),
    );
    expect(phases).toContain('restart');
    expect(sha(await readBack())).toBe(sha(CHANGED));
  });

  it('a dropped connection restarts from zero (no checksum to verify a resumed file) and completes', async () => {
    server.setFault(PATH, { skip: 1, times: 2, dropAfterBytes: 300_000 });
    const phases: string[] = [];
    await downloadModel(
      url,
      opts({ fetch: fetchWithout('etag', 'last-modified'), onProgress: (p) => phases.push(p.phase) }),
    );
    expect(
      server
        .requestsFor(PATH)
        .slice(1)
        .map((r) => r.range),
    ).toEqual(['bytes=0-', 'bytes=0-', 'bytes=0-']);
    expect(phases).toContain('restart');
    expect(sha(await readBack())).toBe(sha(FIXTURE));
  });

  it('with a sha256 to verify, a dropping connection resumes from the last byte received (even mid-chunk)', async () => {
    server.setFault(PATH, { skip: 1, times: 30, dropAfterBytes: 100_000 });
    const m = await downloadModel(url, opts({ sha256: sha(FIXTURE), fetch: fetchWithout('etag', 'last-modified') }));
    const ranged = server.requestsFor(PATH).slice(1);
    // Each attempt continues where the last one's received bytes ended (the client may lose some of what the server
    // wrote before the drop, so starts are not multiples of 100,000); chunk boundaries (128 KiB) play no part.
    const starts = ranged.map((r) => Number(/^bytes=(\d+)-$/.exec(r.range ?? '')?.[1]));
    expect(starts[0]).toBe(0);
    for (let i = 1; i < starts.length; i++) {
      expect(starts[i]).toBeGreaterThan(starts[i - 1]);
      expect(starts[i] - starts[i - 1]).toBeLessThanOrEqual(100_000);
    }
    expect(starts.some((s) => s % CHUNK !== 0 && s > CHUNK)).toBe(true);
    expect(m.sha256).toBe(sha(FIXTURE));
    expect(sha(await readBack())).toBe(sha(FIXTURE));
  });

  it('dropping forever: retries run out even though every attempt made progress', async () => {
    server.setFault(PATH, { skip: 1, dropAfterBytes: 300_000 });
    const e = await llmError(downloadModel(url, opts({ retries: 2, fetch: fetchWithout('etag', 'last-modified') })));
    expect(e.code).toBe('network');
    expect(server.requestsFor(PATH)).toHaveLength(1 + 3);
  });
});

describe('between sessions', () => {
  it('no validators, same-size replacement between sessions: stored chunks discarded, no mixed bytes', async () => {
    server.setFault(PATH, { noValidators: true });
    await interruptAfter(3 * CHUNK);
    const partial = await readManifest(url, { store });
    expect(partial?.chunkPresent.some(Boolean)).toBe(true);
    server.replaceFile(PATH, CHANGED);
    server.clearLog();
    const phases: string[] = [];
    await downloadModel(url, opts({ onProgress: (p) => phases.push(p.phase) }));
    expect(phases).toContain('restart');
    expect(server.requestsFor(PATH).map((r) => r.range)).toEqual(['bytes=0-0', 'bytes=0-']);
    expect(sha(await readBack())).toBe(sha(CHANGED));
  });

  it('Last-Modified only: no cross-session resume either', async () => {
    const noEtagFetch = fetchWithout('etag');
    await interruptAfter(3 * CHUNK, { fetch: noEtagFetch });
    server.clearLog();
    const phases: string[] = [];
    await downloadModel(url, opts({ fetch: noEtagFetch, onProgress: (p) => phases.push(p.phase) }));
    expect(phases).toContain('restart');
    expect(sha(await readBack())).toBe(sha(FIXTURE));
  });

  it("no validators but the caller's sha256: resumes after the stored prefix, and the file is verified", async () => {
    server.setFault(PATH, { noValidators: true });
    await interruptAfter(3 * CHUNK, { sha256: sha(FIXTURE) });
    const stored = (await readManifest(url, { store }))!.chunkPresent.filter(Boolean).length;
    expect(stored).toBeGreaterThan(0);
    server.clearLog();
    const m = await downloadModel(url, opts({ sha256: sha(FIXTURE) }));
    expect(server.requestsFor(PATH).map((r) => r.range)).toEqual(['bytes=0-0', `bytes=${stored * CHUNK}-`]);
    expect(m.sha256).toBe(sha(FIXTURE));
    expect(sha(await readBack())).toBe(sha(FIXTURE));
  });

  it("the caller's sha256 and a replacement between sessions: the resumed file fails it, then a fresh one too: nothing stored", async () => {
    server.setFault(PATH, { noValidators: true });
    await interruptAfter(3 * CHUNK, { sha256: sha(FIXTURE) });
    server.replaceFile(PATH, CHANGED);
    const e = await llmError(downloadModel(url, opts({ sha256: sha(FIXTURE) })));
    expect(e.code).toBe('network');
    expect(e.details?.reason).toBe('checksum-mismatch');
    expect(e.details?.isResumed).toBe(false); // the resumed attempt failed first and was restarted from zero
    expect(await readManifest(url, { store })).toBeUndefined();
  });

  it('X-Linked-Etag (a sha256) is the resume key when there is no strong ETag', async () => {
    server.setFault(PATH, { noValidators: true, linkedEtag: true });
    await interruptAfter(3 * CHUNK);
    expect((await readManifest(url, { store }))?.sha256).toBe(sha(FIXTURE));
    server.clearLog();
    const m = await downloadModel(url, opts());
    expect(server.requestsFor(PATH)[1].range).not.toBe('bytes=0-');
    expect(m.sha256).toBe(sha(FIXTURE));
  });
});

describe('the stored copy is checked on every open', () => {
  it('records the sha256 of the whole file and of every chunk when the download completes', async () => {
    const m = await downloadModel(url, opts());
    expect(m.sha256).toBe(sha(FIXTURE));
    expect(m.chunkSha256).toHaveLength(m.chunkPresent.length);
    expect(m.chunkSha256?.[1]).toBe(sha(FIXTURE.subarray(CHUNK, 2 * CHUNK)));
  });

  it('a complete entry whose recorded sha256 differs from the one now expected is not returned as cached', async () => {
    await downloadModel(url, opts());
    server.clearLog();
    const e = await llmError(downloadModel(url, opts({ sha256: 'f'.repeat(64) })));
    expect(e.details?.reason).toBe('checksum-mismatch');
    expect(server.requestsFor(PATH).length).toBeGreaterThan(1);
    const m = await downloadModel(url, opts({ sha256: sha(FIXTURE) }));
    expect(m.sha256).toBe(sha(FIXTURE));
  });

  it('a byte changed in IndexedDB: open refuses it, the chunk is marked for refetch, openModelSource heals it', async () => {
    await downloadModel(url, opts());
    const bytes = await storedChunkBytes(await get(chunkKey(url, 2), store));
    bytes[100] ^= 1;
    await set(chunkKey(url, 2), bytes.buffer, store);
    const e = await llmError(IdbByteSource.open(url, { store }));
    expect(e.code).toBe('network');
    expect(e.details).toMatchObject({ reason: 'checksum-mismatch', chunk: 2 });
    const m = await readManifest(url, { store });
    expect(m?.complete).toBe(false);
    expect(m?.chunkPresent[2]).toBe(false);
    server.clearLog();
    const source = await openModelSource(url, opts());
    expect(sha(await source.read(0, source.size))).toBe(sha(FIXTURE));
    expect(
      server
        .requestsFor(PATH)
        .slice(1)
        .map((r) => r.range),
    ).toEqual([`bytes=${2 * CHUNK}-${3 * CHUNK - 1}`]);
  });

  it("verify: 'read' refuses the damaged chunk at the read that meets it", async () => {
    await downloadModel(url, opts());
    const bytes = await storedChunkBytes(await get(chunkKey(url, 4), store));
    bytes[7] ^= 0x80;
    await set(chunkKey(url, 4), bytes.buffer, store);
    const source = await IdbByteSource.open(url, { store, verify: 'read' });
    expect(sha(await source.read(0, CHUNK))).toBe(sha(FIXTURE.subarray(0, CHUNK)));
    expect((await llmError(source.read(4 * CHUNK, 10))).details?.reason).toBe('checksum-mismatch');
  });

  it('an entry stored without checksums (older version) is not served, and the next download starts over', async () => {
    await downloadModel(url, opts());
    const m = (await get<ModelManifest>(manifestKey(url), store))!;
    await set(manifestKey(url), { ...m, sha256: null, chunkSha256: undefined }, store);
    expect((await llmError(IdbByteSource.open(url, { store }))).details?.reason).toBe('checksum-mismatch');
    await set(manifestKey(url), { ...m, sha256: null, chunkSha256: undefined }, store);
    server.clearLog();
    await downloadModel(url, opts());
    expect(server.requestsFor(PATH).length).toBeGreaterThan(1);
    expect(sha(await readBack())).toBe(sha(FIXTURE));
  });
});

describe('createEngine', () => {
  it('passes sha256 to the download: a wrong one is a checksum-mismatch and nothing is stored', async () => {
    const e = await llmError(
      createEngine({ model: url, sha256: '0'.repeat(64), backend: 'cpu', warmup: false, contextLength: 64 }),
    );
    expect(e.code).toBe('network');
    expect(e.details?.reason).toBe('checksum-mismatch');
    expect(await readManifest(url)).toBeUndefined();
  });
});
