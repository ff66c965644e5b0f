/**
 * `downloadModel`: fetches a model file into the IndexedDB model store through the range reader, only the chunks the
 * store lacks, so a download interrupted by a reload or a lost connection resumes where it stopped. Checks quota
 * first, restarts cleanly when the file changes on the server, and verifies the sha256 when it is known.
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
  isQuotaExceeded,
  readChunk,
  readManifest,
  storedBytesOf,
  updateManifest,
  writeChunk,
  writeManifest,
} from './model-store.js';
import { RangeReader, type RangeReaderOptions } from './range-reader.js';
import { Sha256 } from './sha256.js';

/** Options of `downloadModel`. */
export interface DownloadModelOptions extends ModelStoreOptions, Omit<RangeReaderOptions, 'chunkBytes' | 'onProgress'> {
  /** Progress: `download` (bytes stored, counting chunks cached earlier), `verify`, `restart`, `cached`. */
  onProgress?: ProgressCallback;
  /** Chunk size of a NEW entry (default 16 MiB); an entry being resumed keeps its own. */
  chunkBytes?: number;
  /** Expected sha256 (hex) of the file; verified at the end, and a mismatch deletes the entry. */
  sha256?: string;
  /** `navigator.storage` stand-in (quota estimate, persist request); default `navigator.storage`. */
  storage?: StorageEstimator;
  /** How many times a file that changes on the server mid-download is restarted before giving up (default 2). */
  maxRestarts?: number;
}

/**
 * Makes `url` complete in the model store and resolves with its manifest. An entry that is already complete is
 * returned without any network request (`cached` progress). Otherwise the server is probed; a stored partial entry of
 * the same version (size, ETag, Last-Modified) is resumed, a stale one is discarded. Errors: `LlmError('network')`,
 * `'range-unsupported'`, `'storage-quota'` (`details.neededBytes`, `details.availableBytes`), `'aborted'`.
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
  const existing = await readManifest(href, options);
  if (existing?.complete) {
    const touched = await updateManifest(href, existing.downloadId, (m) => ({ ...m, lastUsedAt: Date.now() }), options);
    reportProgress(options.onProgress, { phase: 'cached', loadedBytes: existing.size, totalBytes: existing.size, url: href });
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
      if (!isFileChangedError(e) || restarts >= maxRestarts) throw e;
      // The stored chunks belong to the old version: drop them all and start over from a fresh probe.
      await deleteModel(href, options);
      reportProgress(options.onProgress, { phase: 'restart', loadedBytes: 0, totalBytes: 0, url: href });
    }
  }
}

/** One attempt against one version of the file; a version change surfaces as the file-changed error. */
async function downloadOnce(url: string, options: DownloadModelOptions, storage: StorageEstimator | undefined): Promise<ModelManifest> {
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
  if (manifest !== undefined && !isSameVersion(manifest, reader, options.sha256)) {
    await deleteModel(url, options);
    reportProgress(onProgress, { phase: 'restart', loadedBytes: 0, totalBytes: reader.size, url });
    manifest = undefined;
  }
  if (manifest === undefined) {
    const chunkBytes = checkChunkBytes(options.chunkBytes ?? DEFAULT_CHUNK_BYTES);
    manifest = newManifest(url, reader, chunkBytes, options.sha256 ?? null);
    await checkQuota(url, reader.size, storage);
    try {
      await writeManifest(manifest, options);
    } catch (e) {
      throw isQuotaExceeded(e) ? await quotaError(url, reader.size, storage, e) : e;
    }
  } else {
    await checkQuota(url, reader.size - storedBytesOf(manifest), storage);
  }
  baseBytes = storedBytesOf(manifest);
  reportLoaded(baseBytes, manifest.size);

  const missing = manifest.chunkPresent.flatMap((present, i) => (present ? [] : [i]));
  const { downloadId } = manifest;
  const m = manifest;
  let storedBytes = baseBytes;
  let next = 0;
  let firstError: unknown;
  const stop = linkSignals(signal); // the first failing worker stops its siblings
  const worker = async (): Promise<void> => {
    try {
      while (next < missing.length) {
        throwIfAborted(stop.signal, `download of ${url}`);
        const index = missing[next++];
        const bytes = await reader.read(index * m.chunkBytes, chunkLength(m, index), stop.signal);
        throwIfAborted(stop.signal, `download of ${url}`);
        let isWritten: boolean;
        try {
          isWritten = await writeChunk(url, downloadId, index, bytes, options);
        } catch (e) {
          throw isQuotaExceeded(e) ? await quotaError(url, m.size - storedBytes, storage, e) : e;
        }
        if (!isWritten) {
          throw new LlmError('aborted', `download of ${url} stopped: its store entry was deleted or replaced meanwhile`);
        }
        storedBytes += bytes.byteLength;
        reportLoaded(storedBytes, m.size);
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
  return finish(url, downloadId, options);
}

/** Verifies (when the sha256 is known) every stored chunk in order, then marks the entry complete. */
async function finish(url: string, downloadId: string, options: DownloadModelOptions): Promise<ModelManifest> {
  const m = await readManifest(url, options);
  if (m === undefined || m.downloadId !== downloadId) {
    throw new LlmError('aborted', `download of ${url} stopped: its store entry was deleted or replaced meanwhile`);
  }
  if (m.sha256 !== null) {
    const hash = new Sha256();
    let hashedBytes = 0;
    for (let i = 0; i < m.chunkPresent.length; i++) {
      throwIfAborted(options.signal, `verification of ${url}`);
      const chunk = await readChunk(url, i, options);
      if (chunk === undefined || chunk.byteLength !== chunkLength(m, i)) {
        await deleteModel(url, options);
        throw new LlmError('network', `verifying ${url}: stored chunk ${i} is missing or damaged; the entry was deleted, download it again`, {
          details: { url, chunk: i },
        });
      }
      hash.update(chunk);
      hashedBytes += chunk.byteLength;
      reportProgress(options.onProgress, { phase: 'verify', loadedBytes: hashedBytes, totalBytes: m.size, url });
    }
    const actual = hash.digestHex();
    if (actual !== m.sha256) {
      await deleteModel(url, options);
      throw new LlmError('network', `verifying ${url}: sha256 is ${actual} but ${m.sha256} was expected; the downloaded ` +
        'copy was deleted: check the URL and the expected hash, then download again', { details: { url, expected: m.sha256, actual } });
    }
  }
  const done = await updateManifest(url, downloadId, (cur) => ({ ...cur, complete: cur.chunkPresent.every(Boolean), lastUsedAt: Date.now() }), options);
  if (done === null || !done.complete) {
    throw new LlmError('network', `download of ${url} finished with chunks missing from the store; download it again`, { details: { url } });
  }
  return done;
}

function isSameVersion(m: ModelManifest, reader: RangeReader, sha256: string | undefined): boolean {
  return m.size === reader.size && m.etag === reader.etag && m.lastModified === reader.lastModified &&
    (sha256 === undefined || m.sha256 === null || m.sha256 === sha256.toLowerCase());
}

function newManifest(url: string, reader: RangeReader, chunkBytes: number, sha256: string | null): ModelManifest {
  const now = Date.now();
  return {
    url,
    size: reader.size,
    etag: reader.etag,
    lastModified: reader.lastModified,
    chunkBytes,
    chunkPresent: new Array<boolean>(chunkCountOf(reader.size, chunkBytes)).fill(false),
    sha256: sha256?.toLowerCase() ?? null,
    complete: false,
    downloadId: `${now.toString(36)}-${Math.random().toString(36).slice(2)}`,
    createdAt: now,
    lastUsedAt: now,
  };
}

function checkChunkBytes(chunkBytes: number): number {
  if (!Number.isSafeInteger(chunkBytes) || chunkBytes < 1) {
    throw new LlmError('invalid-request', `downloadModel option chunkBytes must be a positive integer, got ${chunkBytes}`);
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

async function quotaError(url: string, neededBytes: number, storage: StorageEstimator | undefined, cause: unknown,
  knownAvailable?: number): Promise<LlmError> {
  let availableBytes: number | null = knownAvailable ?? null;
  if (availableBytes === null) {
    const estimate = await estimateStorage(storage);
    if (estimate !== null && estimate.quota !== null) availableBytes = Math.max(0, estimate.quota - (estimate.usage ?? 0));
  }
  const mib = (n: number): string => `${(n / 1048576).toFixed(1)} MiB`;
  return new LlmError('storage-quota', `storing ${url}: ${mib(neededBytes)} more are needed but ` +
    `${availableBytes === null ? 'the browser refused to store more' : `only ${mib(availableBytes)} are available`}; ` +
    'free space (delete cached models with deleteModel) or use a smaller model', {
    cause,
    details: { url, neededBytes, availableBytes },
  });
}
