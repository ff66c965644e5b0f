/**
 * Reading stored chunks of the IndexedDB model store OFF the calling thread (issue 20): in Chromium the structured-
 * clone decode of a 16 MiB IndexedDB value and the WebCrypto sha256 of it each cost ~40 ms of the calling thread per
 * chunk — about as much as the rest of a model load together. A small dedicated worker (started from an inline
 * script, no file to serve) reads each chunk from the default store, hashes it, and TRANSFERS the bytes back (no
 * copy), so the loading thread only parses, repacks and uploads. Where a worker cannot run — no `Worker`/IndexedDB
 * (Node), a caller's own `store` (an opaque idb-keyval function the worker cannot open), a Content-Security-Policy
 * refusing `blob:` workers, any failure inside it — a read falls back to the calling thread, with the same results
 * and errors (the fallback repeats the read there, so store errors surface exactly as before).
 */

import { DEFAULT_DB_NAME, DEFAULT_STORE_NAME, type ModelStoreOptions, chunkKey, readChunk } from './model-store.js';
import { chunkSum } from './chunk-sum.js';
import { releaseBuffer } from './release-buffer.js';
import { sha256HexAsync } from './sha256.js';

/** One chunk as read: its bytes (undefined when not stored) and, when asked for, their sha256 or their `chunkSum`. */
interface ReadChunk {
  readonly bytes: Uint8Array | undefined;
  readonly sha256: string | null;
  readonly sum?: string | null;
}

/** What a read checks the bytes with: nothing, their sha256 (`true`), or their fast `chunkSum` (`'sum'`). */
export type ChunkHash = boolean | 'sum';

/** Reads chunks of one stored model, hashing them when asked. */
export interface ChunkReader {
  read(url: string, index: number, hash: ChunkHash): Promise<ReadChunk>;
  /**
   * Frees the memory of a chunk the caller is done with (`bytes` must view its whole buffer; it is detached): handed
   * to the worker, which frees it on its own thread, where one runs — unmapping 16 MiB costs the calling thread
   * ~1.5–4 ms per chunk in Chromium — else released here (`releaseBuffer`).
   */
  release(bytes: Uint8Array): void;
  /** Stops the worker, if any (reads still pending fall back to the calling thread). */
  close(): void;
}

/** What the worker answers: the bytes transferred, or `missing`, or an error (then the read is repeated here). */
interface WorkerReply {
  readonly id: number;
  readonly buffer?: ArrayBuffer;
  readonly offset?: number;
  readonly length?: number;
  readonly sha256?: string | null;
  readonly sum?: string | null;
  readonly missing?: boolean;
  readonly error?: string;
  /** The stored value was a Blob (read into a fresh buffer, transferred): nothing of it stays in the worker. */
  readonly wasBlob?: boolean;
}

/** The minimal worker surface used (a DOM `Worker`, or a test's stand-in). */
export interface WorkerLike {
  postMessage(message: unknown, transfer?: Transferable[]): void;
  onmessage: ((e: { data: unknown }) => void) | null;
  onerror: ((e: unknown) => void) | null;
  terminate(): void;
}

/**
 * The worker's script (plain ES2017, run as a classic worker from a `blob:` URL). Messages in:
 * `{ db, store, id, key, hash }`; out: `{ id, buffer, offset, length, sha256, wasBlob }` with `buffer` transferred (a
 * chunk stored as a Blob is read into a fresh buffer first),
 * `{ id, missing: true }`, or `{ id, error }`. It never creates the database: an open that would upgrade is aborted.
 */
export const CHUNK_WORKER_SOURCE = `'use strict';
var chunkSum = (${String(chunkSum)});
for (var warm = 0; warm < 8; warm++) chunkSum(new Uint8Array(65536)); // optimised before the first 16 MiB chunk
var dbs = {};
function openDb(name) {
  if (!dbs[name]) dbs[name] = new Promise(function (resolve, reject) {
    var req = indexedDB.open(name);
    req.onupgradeneeded = function () { req.transaction.abort(); };
    req.onsuccess = function () {
      var db = req.result;
      db.onversionchange = function () { db.close(); delete dbs[name]; };
      resolve(db);
    };
    req.onerror = function () { delete dbs[name]; reject(req.error || new Error('open failed')); };
    req.onblocked = function () { delete dbs[name]; reject(new Error('open blocked')); };
  });
  return dbs[name];
}
function hex(buf) {
  var b = new Uint8Array(buf), s = '';
  for (var i = 0; i < b.length; i++) s += (b[i] < 16 ? '0' : '') + b[i].toString(16);
  return s;
}
self.onmessage = function (e) {
  var m = e.data, wasBlob = false;
  if (m.free) {
    try {
      var ch = new MessageChannel();
      ch.port1.postMessage(null, [m.free]);
      ch.port1.close();
      ch.port2.close();
    } catch (err) {}
    return;
  }
  openDb(m.db).then(function (db) {
    return new Promise(function (resolve, reject) {
      var req = db.transaction(m.store, 'readonly').objectStore(m.store).get(m.key);
      req.onsuccess = function () { resolve(req.result); };
      req.onerror = function () { reject(req.error || new Error('get failed')); };
    });
  }).then(function (v) {
    wasBlob = typeof Blob === 'function' && v instanceof Blob;
    return wasBlob ? v.arrayBuffer() : v;
  }).then(function (v) {
    var buffer = null, offset = 0, length = 0;
    if (v instanceof ArrayBuffer) { buffer = v; length = v.byteLength; }
    else if (ArrayBuffer.isView(v)) { buffer = v.buffer; offset = v.byteOffset; length = v.byteLength; }
    if (buffer === null) { self.postMessage({ id: m.id, missing: true }); return; }
    if (m.hash === 'sum') {
      var sum = chunkSum(new Uint8Array(buffer, offset, length));
      self.postMessage({ id: m.id, buffer: buffer, offset: offset, length: length, sha256: null, sum: sum, wasBlob: wasBlob }, [buffer]);
      return;
    }
    var hashed = m.hash ? crypto.subtle.digest('SHA-256', new Uint8Array(buffer, offset, length)).then(hex) : Promise.resolve(null);
    return hashed.then(function (sha256) {
      self.postMessage({ id: m.id, buffer: buffer, offset: offset, length: length, sha256: sha256, wasBlob: wasBlob }, [buffer]);
    });
  }).catch(function (err) {
    self.postMessage({ id: m.id, error: String(err && err.message || err) });
  });
};
`;

/** Reads on the calling thread: the store's own `readChunk` and WebCrypto (or the portable hash). */
async function readHere(url: string, index: number, hash: ChunkHash, options: ModelStoreOptions): Promise<ReadChunk> {
  const bytes = await readChunk(url, index, options);
  if (hash === 'sum') return { bytes, sha256: null, sum: bytes === undefined ? null : chunkSum(bytes) };
  return { bytes, sha256: hash && bytes !== undefined ? await sha256HexAsync(bytes) : null };
}

/** Starts the chunk worker from its inline script, or returns null where workers or blob URLs are unavailable. */
function spawnBlobWorker(): WorkerLike | null {
  if (typeof Worker === 'undefined' || typeof Blob === 'undefined' || typeof URL.createObjectURL !== 'function')
    return null;
  try {
    const url = URL.createObjectURL(new Blob([CHUNK_WORKER_SOURCE], { type: 'text/javascript' }));
    try {
      return new Worker(url) as unknown as WorkerLike;
    } finally {
      URL.revokeObjectURL(url);
    }
  } catch {
    return null; // e.g. a Content-Security-Policy without blob: in worker-src
  }
}

/**
 * Chunks stored as decoded values (ArrayBuffers, as older versions stored them) one worker reads before it is
 * replaced: ending a worker frees its whole heap at once — the IndexedDB values it decoded included, which otherwise
 * wait for a garbage collection that a worker allocating almost nothing in JavaScript seldom runs (in Chromium they
 * held ~10 chunks' worth of memory during a model load). Chunks stored as Blobs leave nothing behind (their bytes
 * are read into a buffer that is transferred out), so they do not count: one worker serves a whole load, instead of
 * a new one started (~5 ms of the calling thread, and a thread and heap to set up) every 4 chunks.
 */
const DECODED_PER_WORKER = 4;

/** One started worker and the replies it owes. */
interface Helper {
  readonly worker: WorkerLike;
  readonly pending: Map<number, (r: WorkerReply | null) => void>;
  decoded: number;
  isRetired: boolean;
}

/**
 * A chunk reader for `options`' store: through a worker for the default store where one can start (`spawn`
 * replaces the worker factory in tests), else on the calling thread.
 */
export function openChunkReader(
  options: ModelStoreOptions,
  spawn: () => WorkerLike | null = spawnBlobWorker,
): ChunkReader {
  const here: ChunkReader = {
    read: (url, i, hash) => readHere(url, i, hash, options),
    release: releaseBuffer,
    close: () => undefined,
  };
  if (options.store !== undefined || typeof indexedDB === 'undefined') return here;
  let nextId = 0;
  let isBroken = false;
  let isClosed = false;
  let current: Helper | null = null;
  const helpers = new Set<Helper>();
  const end = (h: Helper) => {
    helpers.delete(h);
    for (const settle of h.pending.values()) settle(null);
    h.pending.clear();
    h.worker.terminate();
  };
  const start = (): Helper | null => {
    const worker = spawn();
    if (worker === null) return null;
    const h: Helper = { worker, pending: new Map(), decoded: 0, isRetired: false };
    worker.onmessage = (e) => {
      const r = e.data as WorkerReply;
      if (r.buffer !== undefined && r.wasBlob !== true) h.decoded++; // a value decoded in its heap
      const settle = h.pending.get(r.id);
      h.pending.delete(r.id);
      settle?.(r);
      if (h.isRetired && h.pending.size === 0) end(h);
    };
    worker.onerror = () => {
      isBroken = true; // the script did not start (CSP) or crashed: reads go through the calling thread from now on
      for (const x of [...helpers]) end(x);
    };
    helpers.add(h);
    return h;
  };
  /**
   * The worker for the next request: the current one, or a fresh one once it has decoded its share (counted as
   * replies arrive: requests already sent still complete in it, so it ends after at most its share plus the reads
   * then in flight).
   */
  const helper = (): Helper | null => {
    if (current !== null && current.decoded >= DECODED_PER_WORKER) {
      current.isRetired = true;
      if (current.pending.size === 0) end(current);
      current = null;
    }
    current ??= start();
    if (current === null) isBroken = true;
    return current;
  };
  if (helper() === null) return here;
  const closedError = (url: string, index: number) =>
    new Error(`chunk ${index} of ${url} read after the reader was closed`);
  return {
    async read(url, index, hash) {
      if (isClosed) throw closedError(url, index);
      const h = isBroken ? null : helper();
      if (h === null) return readHere(url, index, hash, options);
      const id = nextId++;
      const reply = await new Promise<WorkerReply | null>((resolve) => {
        h.pending.set(id, resolve);
        h.worker.postMessage({ db: DEFAULT_DB_NAME, store: DEFAULT_STORE_NAME, id, key: chunkKey(url, index), hash });
      });
      if (isClosed) throw closedError(url, index);
      if (reply === null || reply.error !== undefined) return readHere(url, index, hash, options);
      if (reply.missing === true || reply.buffer === undefined) return { bytes: undefined, sha256: null };
      const bytes = new Uint8Array(reply.buffer, reply.offset ?? 0, reply.length);
      return { bytes, sha256: reply.sha256 ?? null, sum: reply.sum ?? null };
    },
    release(bytes) {
      const buffer = bytes.buffer;
      const isWhole = bytes.byteOffset === 0 && bytes.byteLength === buffer.byteLength && buffer.byteLength > 0;
      const h = isBroken || isClosed || !isWhole ? null : current;
      if (h === null) return releaseBuffer(bytes);
      try {
        h.worker.postMessage({ free: buffer }, [buffer as ArrayBuffer]);
      } catch {
        releaseBuffer(bytes); // not transferable here: freed (or left to the collector) on this thread
      }
    },
    close() {
      isClosed = true;
      for (const h of [...helpers]) end(h);
      current = null;
    },
  };
}
