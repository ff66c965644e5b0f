/**
 * `downloadModel`: fetches a model file into the IndexedDB model store through the range reader. Bytes of two
 * versions of a file are never stored together:
 * - with validators that tie range requests to one version (a strong ETag or Last-Modified, sent as `If-Range`),
 *   chunks are fetched in parallel and a change restarts the download;
 * - without them, the file comes through ONE response (`stream-download.ts`), since only a single response is known
 *   to hold one version;
 * - chunks stored in an earlier session are resumed only when a strong ETag still matches, or against a sha256 the
 *   caller gave (or the server's `X-Linked-Etag`) that the finished file is checked against; otherwise they are
 *   discarded and the download starts from zero.
 * When complete, the file's sha256 is recorded with a sha256 per chunk; `IdbByteSource.open` checks them on every
 * later open. Quota is checked first.
 */

import { LlmError, throwIfAborted } from '../errors.js';
import { linkSignals, rethrowIfAborted } from './abort-signals.js';
import { type ProgressCallback, reportProgress } from './download-progress.js';
import { isFileChangedError } from './http-response-checks.js';
import {
  DEFAULT_CHUNK_BYTES,
  type ModelManifest,
  asStoreError,
  type ModelStoreOptions,
  type StorageEstimator,
  chunkCountOf,
  chunkLength,
  defaultStorage,
  deleteModel,
  estimateStorage,
  hasChunkDigests,
  isQuotaExceeded,
  isServable,
  readManifest,
  storedBytesOf,
  updateManifest,
  writeChunk,
  writeManifest,
} from './model-store.js';
import { RangeReader, type RangeReaderOptions } from './range-reader.js';
import { sha256HexAsync } from './sha256.js';
import { checkStoredChunks } from './stored-model-check.js';
import { streamIntoStore } from './stream-download.js';

/** Largest file the store accepts (1 TiB): a size reported by a server is checked against it before anything is sized by it. */
const MAX_STORED_BYTES = 2 ** 40;
/** Most chunks of one entry (the manifest holds a map of them). */
const MAX_CHUNKS = 2 ** 20;

/** Options of `downloadModel`. */
export interface DownloadModelOptions extends ModelStoreOptions, Omit<RangeReaderOptions, 'chunkBytes' | 'onProgress'> {
  /** Progress: `download` (bytes stored, counting chunks cached earlier), `verify`, `restart`, `cached`. */
  onProgress?: ProgressCallback;
  /** Chunk size of a NEW entry (default 16 MiB); an entry being resumed keeps its own. */
  chunkBytes?: number;
  /**
   * Expected sha256 (64 hex digits) of the file, e.g. from the model's page. The finished download is checked
   * against it (a mismatch deletes the entry: `LlmError('network')`, `details.reason: 'checksum-mismatch'`), and it
   * is what lets a download resume across sessions from a server without a strong ETag. Default: the server's
   * `X-Linked-Etag` when it exposes a sha256 there (Hugging Face LFS files), else none.
   */
  sha256?: string;
  /** `navigator.storage` stand-in (quota estimate, persist request); default `navigator.storage`. */
  storage?: StorageEstimator;
  /** How many times a file that changes on the server mid-download is restarted before giving up (default 2). */
  maxRestarts?: number;
}

/**
 * Makes `url` complete in the model store and resolves with its manifest (`sha256`: the file's, recorded at
 * completion). An entry that is already complete (and matches `sha256` when given) is returned without any network
 * request (`cached` progress). Otherwise the server is probed; a stored partial entry is resumed only when it is the
 * same version under a strong ETag or a known sha256 will verify the result, else it is discarded. Errors:
 * `LlmError('network')` (`details.reason: 'checksum-mismatch'` when the file does not match `sha256`),
 * `'range-unsupported'`, `'storage-quota'` (`details.neededBytes`, `details.availableBytes`), `'aborted'`,
 * `'invalid-request'` (a malformed option).
 */
export async function downloadModel(url: string | URL, options: DownloadModelOptions = {}): Promise<ModelManifest> {
  const href = String(url);
  try {
    return await downloadWithRestarts(href, options);
  } catch (e) {
    throw asStoreError(e, `downloading ${href} into the model store`);
  }
}

async function downloadWithRestarts(href: string, options: DownloadModelOptions): Promise<ModelManifest> {
  const { signal } = options;
  throwIfAborted(signal, `download of ${href}`);
  const expected = expectedSha256(options.sha256);
  const existing = await readManifest(href, options);
  if (isServable(existing) && (expected === null || existing.sha256 === expected)) {
    const touched = await updateManifest(href, existing.downloadId, (m) => ({ ...m, lastUsedAt: Date.now() }), options);
    reportProgress(options.onProgress, {
      phase: 'cached',
      loadedBytes: existing.size,
      totalBytes: existing.size,
      url: href,
    });
    return touched ?? existing;
  }
  const storage = options.storage ?? defaultStorage();
  // Ask the browser not to evict the cache under storage pressure; the answer does not change what we do next.
  void storage?.persist?.().catch(() => false);
  const maxRestarts = options.maxRestarts ?? 2;
  for (let restarts = 0; ; restarts++) {
    try {
      return await downloadOnce(href, options, storage);
    } catch (e) {
      rethrowIfAborted(e, signal, `download of ${href}`);
      if (!(isFileChangedError(e) || isResumedMismatch(e)) || restarts >= maxRestarts) throw e;
      // The stored chunks belong to the old version: drop them all and start over from a fresh probe.
      await deleteModel(href, options);
      reportProgress(options.onProgress, { phase: 'restart', loadedBytes: 0, totalBytes: 0, url: href });
    }
  }
}

/** One attempt against one version of the file; a version change surfaces as the file-changed error. */
async function downloadOnce(
  url: string,
  options: DownloadModelOptions,
  storage: StorageEstimator | undefined,
): Promise<ModelManifest> {
  const { signal, onProgress } = options;
  let manifest = await readManifest(url, options);
  let baseBytes = 0; // bytes already stored when this attempt started
  let reportedBytes = 0;
  // Network bytes (fine-grained) and stored bytes (per chunk) both feed one monotonic `download` count.
  const reportLoaded = (loadedBytes: number, totalBytes: number): void => {
    reportedBytes = Math.max(reportedBytes, Math.min(loadedBytes, totalBytes));
    reportProgress(onProgress, { phase: 'download', loadedBytes: reportedBytes, totalBytes, url });
  };
  const reader = await RangeReader.open(url, {
    ...options,
    chunkBytes: manifest?.chunkBytes ?? options.chunkBytes ?? DEFAULT_CHUNK_BYTES,
    onProgress: (p) => reportLoaded(baseBytes + p.loadedBytes, p.totalBytes),
  });
  if (reader.size > MAX_STORED_BYTES) {
    // A size from the server is never trusted to size allocations (the chunk map) before it is checked.
    throw new LlmError(
      'storage-quota',
      `storing ${url}: the server reports ${reader.size} bytes, more than the ` +
        `${MAX_STORED_BYTES / 2 ** 40} TiB the model store accepts; check the URL`,
      { details: { url, neededBytes: reader.size, availableBytes: MAX_STORED_BYTES } },
    );
  }
  const expected = expectedSha256(options.sha256) ?? reader.linkedSha256;
  if (manifest !== undefined && !canResume(manifest, reader, expected)) {
    await deleteModel(url, options);
    reportProgress(onProgress, { phase: 'restart', loadedBytes: 0, totalBytes: reader.size, url });
    manifest = undefined;
  }
  const chunkBytes = checkChunkBytes(manifest?.chunkBytes ?? options.chunkBytes ?? DEFAULT_CHUNK_BYTES, reader.size);
  /** Replaces the entry with an empty one (new download generation) and returns it. */
  const startFresh = async (): Promise<ModelManifest> => {
    const fresh = newManifest(url, reader, chunkBytes, expected);
    try {
      await writeManifest(fresh, options);
    } catch (e) {
      throw isQuotaExceeded(e) ? await quotaError(url, reader.size, storage, e) : e;
    }
    return fresh;
  };
  if (manifest === undefined) {
    await checkQuota(url, reader.size, storage);
    manifest = await startFresh();
  } else {
    await checkQuota(url, reader.size - storedBytesOf(manifest), storage);
  }
  baseBytes = storedBytesOf(manifest);
  const isResumed = baseBytes > 0;
  reportLoaded(baseBytes, manifest.size);
  let storedBytes = baseBytes;
  /** Stores chunk `index` of generation `m` with its sha256. */
  const store = async (m: ModelManifest, index: number, bytes: Uint8Array): Promise<void> => {
    const digest = await sha256HexAsync(bytes);
    let isWritten: boolean;
    try {
      isWritten = await writeChunk(url, m.downloadId, index, bytes, digest, options);
    } catch (e) {
      throw isQuotaExceeded(e) ? await quotaError(url, m.size - storedBytes, storage, e) : e;
    }
    if (!isWritten) {
      throw new LlmError('aborted', `download of ${url} stopped: its store entry was deleted or replaced meanwhile`);
    }
    storedBytes += bytes.byteLength;
    reportLoaded(storedBytes, m.size);
  };

  if (!reader.canCombineRanges) {
    // No validator ties separate requests to one version: one response carries the file. A dropped connection may
    // resume only when the finished file is checked against a known sha256; otherwise it starts over from zero.
    manifest = await streamIntoStore(reader, manifest, {
      canResume: (expected ?? manifest.sha256) !== null,
      signal,
      store,
      restart: async () => {
        await deleteModel(url, options);
        storedBytes = 0;
        reportedBytes = 0;
        reportProgress(onProgress, { phase: 'restart', loadedBytes: 0, totalBytes: reader.size, url });
        return startFresh();
      },
    });
  } else {
    await fetchMissingChunks(url, reader, manifest, options, store);
  }
  return finish(url, manifest.downloadId, isResumed, options);
}

/** Fetches every chunk `m` lacks with parallel range requests (at most `maxInFlight` workers) and stores them. */
async function fetchMissingChunks(
  url: string,
  reader: RangeReader,
  m: ModelManifest,
  options: DownloadModelOptions,
  store: (m: ModelManifest, index: number, bytes: Uint8Array) => Promise<void>,
): Promise<void> {
  const missing = m.chunkPresent.flatMap((present, i) => (present ? [] : [i]));
  let next = 0;
  let firstError: unknown;
  const stop = linkSignals(options.signal); // the first failing worker stops its siblings
  const worker = async (): Promise<void> => {
    try {
      while (next < missing.length) {
        throwIfAborted(stop.signal, `download of ${url}`);
        const index = missing[next++];
        const bytes = await reader.read(index * m.chunkBytes, chunkLength(m, index), stop.signal);
        throwIfAborted(stop.signal, `download of ${url}`);
        await store(m, index, bytes);
      }
    } catch (e) {
      if (firstError === undefined) {
        firstError = e;
        stop.abort(e);
      }
    }
  };
  const workerCount = Math.min(options.maxInFlight ?? 4, Math.max(1, missing.length));
  await Promise.all(Array.from({ length: workerCount }, worker));
  stop.dispose();
  if (firstError !== undefined) throw firstError;
}

/**
 * Reads every stored chunk back in order, checks it against the sha256 recorded when it was written, hashes the whole
 * file, compares that with the expected sha256 when there is one, then records it and marks the entry complete.
 */
async function finish(
  url: string,
  downloadId: string,
  isResumed: boolean,
  options: DownloadModelOptions,
): Promise<ModelManifest> {
  const m = await readManifest(url, options);
  if (m === undefined || m.downloadId !== downloadId) {
    throw new LlmError('aborted', `download of ${url} stopped: its store entry was deleted or replaced meanwhile`);
  }
  if (!m.chunkPresent.every(Boolean)) {
    throw new LlmError('network', `download of ${url} finished with chunks missing from the store; download it again`, {
      details: { url },
    });
  }
  const check = await checkStoredChunks(m, { ...options, wholeFile: true });
  if (!check.ok) {
    await deleteModel(url, options);
    throw new LlmError(
      'network',
      `verifying ${url}: ${check.reason} in the store; the entry was deleted, download it again`,
      {
        details: { url, chunk: check.chunk },
      },
    );
  }
  const actual = check.sha256 ?? '';
  if (m.sha256 !== null && actual !== m.sha256) {
    await deleteModel(url, options);
    const what = isResumed
      ? 'the download resumed chunks stored earlier, so the file probably changed on the server in between'
      : 'check the URL and the expected hash, then download again';
    throw new LlmError(
      'network',
      `verifying ${url}: sha256 is ${actual} but ${m.sha256} was expected; the downloaded ` +
        `copy was deleted: ${what}`,
      { details: { url, expected: m.sha256, actual, reason: 'checksum-mismatch', isResumed } },
    );
  }
  const done = await updateManifest(
    url,
    downloadId,
    (cur) => ({ ...cur, sha256: actual, complete: true, lastUsedAt: Date.now() }),
    options,
  );
  if (done === null) {
    throw new LlmError('aborted', `download of ${url} stopped: its store entry was deleted or replaced meanwhile`);
  }
  return done;
}

/** True for a checksum mismatch after a resumed download: worth one fresh download from zero. */
function isResumedMismatch(e: unknown): boolean {
  return e instanceof LlmError && e.details?.reason === 'checksum-mismatch' && e.details.isResumed === true;
}

/** The caller's expected sha256, checked and lowercased (undefined when not given). */
function expectedSha256(sha256: string | undefined): string | null {
  if (sha256 === undefined) return null;
  if (typeof sha256 !== 'string' || !/^[0-9a-f]{64}$/i.test(sha256)) {
    throw new LlmError(
      'invalid-request',
      `downloadModel option sha256 must be 64 hex digits, got ${String(sha256).slice(0, 80)}`,
      {
        details: { field: 'sha256' },
      },
    );
  }
  return sha256.toLowerCase();
}

/**
 * Whether chunks stored earlier (another session, or before a change) may be completed instead of discarded: same
 * size and validators, chunk digests recorded, no contradicting sha256, and either a strong ETag (it names one
 * version exactly) or a known sha256 that the finished file must match.
 */
function canResume(m: ModelManifest, reader: RangeReader, expected: string | null): boolean {
  if (m.size !== reader.size || m.etag !== reader.etag || m.lastModified !== reader.lastModified || !hasChunkDigests(m))
    return false;
  if (expected !== null && m.sha256 !== null && m.sha256 !== expected) return false;
  if (reader.hasStrongValidator) return true;
  return (expected ?? m.sha256) !== null;
}

function newManifest(url: string, reader: RangeReader, chunkBytes: number, sha256: string | null): ModelManifest {
  const now = Date.now();
  const count = chunkCountOf(reader.size, chunkBytes);
  return {
    url,
    size: reader.size,
    etag: reader.etag,
    lastModified: reader.lastModified,
    chunkBytes,
    chunkPresent: new Array<boolean>(count).fill(false),
    chunkSha256: new Array<string | null>(count).fill(null),
    sha256,
    complete: false,
    downloadId: `${now.toString(36)}-${Math.random().toString(36).slice(2)}`,
    createdAt: now,
    lastUsedAt: now,
  };
}

function checkChunkBytes(chunkBytes: number, size: number): number {
  if (!Number.isSafeInteger(chunkBytes) || chunkBytes < 1) {
    throw new LlmError(
      'invalid-request',
      `downloadModel option chunkBytes must be a positive integer, got ${chunkBytes}`,
    );
  }
  if (chunkCountOf(size, chunkBytes) > MAX_CHUNKS) {
    throw new LlmError(
      'invalid-request',
      `downloadModel option chunkBytes ${chunkBytes} would cut the ${size}-byte file into ` +
        `more than ${MAX_CHUNKS} chunks; use at least ${Math.ceil(size / MAX_CHUNKS)}`,
      { details: { field: 'chunkBytes' } },
    );
  }
  return chunkBytes;
}

/** Rejects with `storage-quota` before any byte is fetched when the estimate says `neededBytes` will not fit. */
async function checkQuota(url: string, neededBytes: number, storage: StorageEstimator | undefined): Promise<void> {
  const estimate = await estimateStorage(storage);
  if (estimate === null || estimate.quota === null) return;
  const availableBytes = Math.max(0, estimate.quota - (estimate.usage ?? 0));
  if (neededBytes > availableBytes) throw await quotaError(url, neededBytes, storage, undefined, availableBytes);
}

async function quotaError(
  url: string,
  neededBytes: number,
  storage: StorageEstimator | undefined,
  cause: unknown,
  knownAvailable?: number,
): Promise<LlmError> {
  let availableBytes: number | null = knownAvailable ?? null;
  if (availableBytes === null) {
    const estimate = await estimateStorage(storage);
    if (estimate !== null && estimate.quota !== null)
      availableBytes = Math.max(0, estimate.quota - (estimate.usage ?? 0));
  }
  const mib = (n: number): string => `${(n / 1048576).toFixed(1)} MiB`;
  return new LlmError(
    'storage-quota',
    `storing ${url}: ${mib(neededBytes)} more are needed but ` +
      `${availableBytes === null ? 'the browser refused to store more' : `only ${mib(availableBytes)} are available`}; ` +
      'free space (delete cached models with deleteModel) or use a smaller model',
    {
      cause,
      details: { url, neededBytes, availableBytes },
    },
  );
}
