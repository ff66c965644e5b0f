/**
 * The IndexedDB model store (idb-keyval, own database `webgguf`, object store `models`): each model file is kept as
 * fixed-size chunks plus one manifest. A chunk and the manifest bit that claims it are written in ONE transaction, so
 * a crash, reload or full disk never leaves a manifest claiming a chunk that is not there. Listing, deletion and usage
 * live here; downloading is `model-download.ts`, reading is `idb-byte-source.ts`.
 */

import { createStore, promisifyRequest, type UseStore } from 'idb-keyval';
import { LlmError } from '../errors.js';
import { chunkSum } from './chunk-sum.js';

/** Default chunk size: 16 MiB (one IndexedDB value; large enough to keep the chunk count small, small enough to retry). */
export const DEFAULT_CHUNK_BYTES = 16 * 1024 * 1024;

/** What the store knows about one cached model file. Plain data (structured-cloneable). */
export interface ModelManifest {
  /** The URL the file was downloaded from (the entry's key). */
  readonly url: string;
  /** File size in bytes. */
  readonly size: number;
  /** Validators of the stored version (null when the server sent none). */
  readonly etag: string | null;
  readonly lastModified: string | null;
  /** Bytes per chunk; the last chunk holds the remainder. */
  readonly chunkBytes: number;
  /** `chunkPresent[i]`: chunk i (bytes `[i·chunkBytes, min((i+1)·chunkBytes, size))`) is stored. */
  readonly chunkPresent: readonly boolean[];
  /**
   * sha256 of the whole file (64 lowercase hex digits): while incomplete, the expected one when known (the caller's
   * `sha256` option or the server's `X-Linked-Etag`), else null; once complete, the hash of the stored bytes,
   * computed when the download finished (and equal to the expected one when there was one).
   */
  readonly sha256: string | null;
  /**
   * sha256 of each stored chunk (null where absent), recorded when the chunk was written and checked whenever the
   * entry is opened, so bytes that changed in IndexedDB are never served. Entries written by versions without it
   * are neither served nor resumed.
   */
  readonly chunkSha256?: readonly (string | null)[];
  /**
   * The fast checksum (`chunkSum`, chunk-sum.ts) of each stored chunk (null where absent), recorded with its sha256:
   * a model load (`verify: 'read'`) checks a chunk by it instead of the sha256 where it is recorded (entries written
   * before it was kept are checked by sha256).
   */
  readonly chunkSums?: readonly (string | null)[];
  /** True once every chunk is stored and the file's sha256 recorded (and verified, when known). Only complete entries are served. */
  readonly complete: boolean;
  /** Identifies one download generation; a chunk write from another generation is refused. */
  readonly downloadId: string;
  /**
   * Set on each part of a split model once the whole set is stored and validated: the first part's URL (the set's
   * name, what `deleteSplitModel` takes), this part's 1-based number and the part count. Absent on ordinary files.
   */
  readonly split?: { readonly first: string; readonly part: number; readonly count: number };
  /** `Date.now()` at creation and at last use. */
  readonly createdAt: number;
  readonly lastUsedAt: number;
}

/** Where the store lives. Every function takes it so tests (and apps) can use their own database. */
export interface ModelStoreOptions {
  /** An idb-keyval store; default `createStore('webgguf', 'models')` (chunks are then read in a worker where one can run). */
  store?: UseStore;
}

/** Totals reported by `storageUsage`. */
export interface StorageUsage {
  /** Number of entries (complete or not). */
  readonly modelCount: number;
  /** Bytes of chunks held by the model store. */
  readonly storedBytes: number;
  /** The origin's usage and quota from `navigator.storage.estimate()`, null where unavailable. */
  readonly usageBytes: number | null;
  readonly quotaBytes: number | null;
}

/** The default store's IndexedDB database and object store names. */
export const DEFAULT_DB_NAME = 'webgguf';
export const DEFAULT_STORE_NAME = 'models';

let defaultStore: UseStore | undefined;

/** The store to use: the caller's, else the default one (created on first use, since creating opens the DB). */
function resolveStore(options?: ModelStoreOptions): UseStore {
  if (options?.store !== undefined) return options.store;
  if (typeof indexedDB === 'undefined') {
    throw new LlmError(
      'invalid-request',
      'the model store needs IndexedDB, which this environment lacks; ' +
        'open the model with caching off (cache: false) or pass options.store',
    );
  }
  defaultStore ??= createStore(DEFAULT_DB_NAME, DEFAULT_STORE_NAME);
  return defaultStore;
}

/** IndexedDB key of a manifest: `['manifest', url]`. */
export function manifestKey(url: string): IDBValidKey {
  return ['manifest', url];
}

/** IndexedDB key of chunk `index`: `['chunk', url, index]`. */
export function chunkKey(url: string, index: number): IDBValidKey {
  return ['chunk', url, index];
}

/** Number of chunks of a file of `size` bytes. */
export function chunkCountOf(size: number, chunkBytes: number): number {
  return Math.ceil(size / chunkBytes);
}

/** Byte length of chunk `index` (the last chunk holds the remainder). */
export function chunkLength(m: Pick<ModelManifest, 'size' | 'chunkBytes'>, index: number): number {
  return Math.min(m.chunkBytes, m.size - index * m.chunkBytes);
}

/** Bytes of `m`'s chunks that are stored. */
export function storedBytesOf(m: ModelManifest): number {
  let bytes = 0;
  m.chunkPresent.forEach((present, i) => {
    if (present) bytes += chunkLength(m, i);
  });
  return bytes;
}

/** Reads the manifest of `url`, or undefined when the store has no entry for it. */
export async function readManifest(url: string, options?: ModelStoreOptions): Promise<ModelManifest | undefined> {
  return resolveStore(options)('readonly', (s) =>
    promisifyRequest(s.get(manifestKey(url)) as IDBRequest<ModelManifest | undefined>),
  );
}

/** Writes `m` as the manifest of `m.url` (replacing any other). */
export async function writeManifest(m: ModelManifest, options?: ModelStoreOptions): Promise<void> {
  await resolveStore(options)('readwrite', (s) => {
    s.put(m, manifestKey(m.url));
    return promisifyRequest(s.transaction);
  });
}

/**
 * Applies `change` to the manifest of `url` in one transaction when its `downloadId` is `downloadId`; resolves with
 * the new manifest, or null (nothing written) when the entry was deleted or replaced meanwhile.
 */
export async function updateManifest(
  url: string,
  downloadId: string,
  change: (m: ModelManifest) => ModelManifest,
  options?: ModelStoreOptions,
): Promise<ModelManifest | null> {
  return resolveStore(options)('readwrite', (s) => {
    let result: ModelManifest | null = null;
    const get = s.get(manifestKey(url)) as IDBRequest<ModelManifest | undefined>;
    get.onsuccess = () => {
      const m = get.result;
      if (m === undefined || m.downloadId !== downloadId) return;
      result = change(m);
      s.put(result, manifestKey(url));
    };
    return promisifyRequest(s.transaction).then(() => result);
  });
}

/**
 * Stores chunk `index` and marks it present in the manifest with its sha256 `digest` and its fast checksum (computed
 * here, chunk-sum.ts), atomically (one transaction). Resolves false, writing
 * nothing, when the manifest is gone or belongs to another download. IndexedDB errors (e.g. `QuotaExceededError`)
 * reject unchanged; the transaction is rolled back, so the entry stays consistent.
 */
export async function writeChunk(
  url: string,
  downloadId: string,
  index: number,
  bytes: Uint8Array,
  digest: string,
  options?: ModelStoreOptions,
): Promise<boolean> {
  const sum = chunkSum(bytes); // recorded with the sha256: what a load checks (chunk-sum.ts)
  if (typeof Blob === 'function' && !isBlobRefused) {
    // As a Blob (issue 20; it copies just the view's bytes): IndexedDB keeps it as a file, and reading it back is one
    // copy into a fresh ArrayBuffer (`blob.arrayBuffer()`) instead of a large structured-clone value to unwrap and
    // deserialize — in Chromium 3–5× less time per 16 MiB chunk, and no decoded copy left for a collection to free.
    // A store that refuses Blobs (some private modes) gets the bytes as before, from then on.
    try {
      return await putChunk(url, downloadId, index, new Blob([bytes as Uint8Array<ArrayBuffer>]), digest, sum, options);
    } catch (e) {
      if (isQuotaExceeded(e)) throw e;
      isBlobRefused = true;
    }
  }
  // Structured clone copies a view's whole ArrayBuffer: store an exact-size buffer. (chunkLength) bytes.
  const value =
    bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes.buffer : bytes.slice().buffer;
  return putChunk(url, downloadId, index, value, digest, sum, options);
}

/** Set once a store refused a chunk stored as a Blob: chunks are then stored as ArrayBuffers. */
let isBlobRefused = false;

/** `writeChunk`'s transaction, with the chunk's stored value. */
async function putChunk(
  url: string,
  downloadId: string,
  index: number,
  value: ArrayBufferLike | Blob,
  digest: string,
  sum: string,
  options?: ModelStoreOptions,
): Promise<boolean> {
  return resolveStore(options)('readwrite', (s) => {
    let isWritten = false;
    const get = s.get(manifestKey(url)) as IDBRequest<ModelManifest | undefined>;
    get.onsuccess = () => {
      const m = get.result;
      if (m === undefined || m.downloadId !== downloadId) return;
      const chunkPresent = m.chunkPresent.slice();
      chunkPresent[index] = true;
      const chunkSha256 = chunkDigestsOf(m);
      chunkSha256[index] = digest;
      const chunkSums = chunkSumsOf(m);
      chunkSums[index] = sum;
      s.put(value, chunkKey(url, index));
      s.put({ ...m, chunkPresent, chunkSha256, chunkSums }, manifestKey(url));
      isWritten = true;
    };
    return promisifyRequest(s.transaction).then(() => isWritten);
  });
}

/** A copy of `m`'s fast chunk checksums, one per chunk (null where unknown). */
function chunkSumsOf(m: ModelManifest): (string | null)[] {
  return m.chunkPresent.map((_, i) => m.chunkSums?.[i] ?? null);
}

/** A copy of `m`'s chunk digests, one per chunk (null where unknown). */
function chunkDigestsOf(m: ModelManifest): (string | null)[] {
  return m.chunkPresent.map((_, i) => m.chunkSha256?.[i] ?? null);
}

/** True when `m` records a digest for every stored chunk (entries from before digests were kept do not). */
export function hasChunkDigests(m: ModelManifest): boolean {
  return (
    Array.isArray(m.chunkSha256) &&
    m.chunkSha256.length === m.chunkPresent.length &&
    m.chunkPresent.every((present, i) => !present || typeof m.chunkSha256?.[i] === 'string')
  );
}

/** True for a complete entry that can be verified (whole-file sha256 and every chunk digest recorded). */
export function isServable(m: ModelManifest | undefined): m is ModelManifest {
  return m?.complete === true && m.sha256 !== null && hasChunkDigests(m);
}

/** Marks chunk `index` of the entry absent (and the entry incomplete), so the next download refetches it. */
export async function markChunkMissing(
  url: string,
  downloadId: string,
  index: number,
  options?: ModelStoreOptions,
): Promise<void> {
  await updateManifest(
    url,
    downloadId,
    (m) => {
      const chunkPresent = m.chunkPresent.slice();
      chunkPresent[index] = false;
      const chunkSha256 = chunkDigestsOf(m);
      chunkSha256[index] = null;
      const chunkSums = chunkSumsOf(m);
      chunkSums[index] = null;
      return { ...m, chunkPresent, chunkSha256, chunkSums, complete: false };
    },
    options,
  ).catch(() => null);
}

/** Reads chunk `index` of `url` as bytes, or undefined when it is not stored. */
export async function readChunk(
  url: string,
  index: number,
  options?: ModelStoreOptions,
): Promise<Uint8Array | undefined> {
  const value = await resolveStore(options)('readonly', (s) =>
    promisifyRequest(s.get(chunkKey(url, index)) as IDBRequest<unknown>),
  );
  return chunkBytesOf(value);
}

/**
 * The bytes of a stored chunk value: a `Blob` (how chunks are written where there is one) read into a fresh buffer,
 * or an `ArrayBuffer`/view (how older versions wrote them) as is; undefined for anything else (not stored).
 */
async function chunkBytesOf(value: unknown): Promise<Uint8Array | undefined> {
  if (typeof Blob === 'function' && value instanceof Blob) return new Uint8Array(await value.arrayBuffer());
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  return undefined;
}

/** Every manifest in the store (complete and incomplete), oldest first. Chunks are not read. */
export async function listModels(options?: ModelStoreOptions): Promise<ModelManifest[]> {
  const all = await resolveStore(options)('readonly', (s) =>
    promisifyRequest(s.getAll(IDBKeyRange.bound(['manifest'], ['manifest', []])) as IDBRequest<ModelManifest[]>),
  );
  return all.sort((a, b) => a.createdAt - b.createdAt);
}

/** Deletes the entry of `url` (manifest first, then its chunks, in one transaction). Resolves true if it existed. */
export async function deleteModel(url: string, options?: ModelStoreOptions): Promise<boolean> {
  return resolveStore(options)('readwrite', (s) => {
    const get = s.getKey(manifestKey(url));
    s.delete(manifestKey(url));
    s.delete(IDBKeyRange.bound(['chunk', url], ['chunk', url, []]));
    return promisifyRequest(s.transaction).then(() => get.result !== undefined);
  });
}

/** Model count, stored bytes and (where the browser reports them) the origin's usage and quota. */
export async function storageUsage(
  options?: ModelStoreOptions & { storage?: StorageEstimator },
): Promise<StorageUsage> {
  const models = await listModels(options);
  const estimate = await estimateStorage(options?.storage);
  return {
    modelCount: models.length,
    storedBytes: models.reduce((sum, m) => sum + storedBytesOf(m), 0),
    usageBytes: estimate?.usage ?? null,
    quotaBytes: estimate?.quota ?? null,
  };
}

/** The part of `navigator.storage` (`StorageManager`) the store uses; injectable for tests. */
export interface StorageEstimator {
  estimate(): Promise<{ usage?: number; quota?: number }>;
  persist?(): Promise<boolean>;
}

/** `navigator.storage` when present. */
export function defaultStorage(): StorageEstimator | undefined {
  return typeof navigator !== 'undefined' && navigator.storage !== undefined ? navigator.storage : undefined;
}

/** `storage.estimate()` (default `navigator.storage`), or null when unavailable or failing. */
export async function estimateStorage(
  storage = defaultStorage(),
): Promise<{ usage: number | null; quota: number | null } | null> {
  if (storage === undefined) return null;
  try {
    const e = await storage.estimate();
    return { usage: e.usage ?? null, quota: e.quota ?? null };
  } catch {
    return null;
  }
}

/** True for the DOMException IndexedDB raises when the origin's quota is exhausted. */
export function isQuotaExceeded(e: unknown): boolean {
  return typeof e === 'object' && e !== null && 'name' in e && e.name === 'QuotaExceededError';
}

/**
 * Turns an IndexedDB failure that is not already an `LlmError` (the database could not open — e.g. a private window —
 * was closed, or failed) into `LlmError('network')` naming `step`, and `QuotaExceededError` into `storage-quota`.
 */
export function asStoreError(e: unknown, step: string): unknown {
  if (e instanceof LlmError) return e;
  if (isQuotaExceeded(e)) {
    return new LlmError(
      'storage-quota',
      `${step}: the browser refused to store more (QuotaExceededError); free space ` +
        '(delete cached models with deleteModel) or use a smaller model',
      { cause: e },
    );
  }
  const what =
    typeof e === 'object' && e !== null && 'name' in e
      ? `${String(e.name)}: ${String((e as Error).message)}`
      : String(e);
  return new LlmError(
    'network',
    `${step}: the IndexedDB model store failed (${what}); retry, free storage, or open ` +
      'the model with caching off (cache: false)',
    { cause: e, details: { reason: 'storage' } },
  );
}
