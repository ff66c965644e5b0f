/**
 * io/: where model bytes come from. `openModelSource` turns whatever the caller has (a URL, a `File`/`Blob`, a Node
 * path) into a `ByteSource`; URLs go through the IndexedDB model store when it is available, so a model is downloaded
 * once, resumably, and later loads make no network request at all.
 */

import { LlmError, throwIfAborted } from '../errors.js';
import type { ByteSource } from './byte-source.js';
import { type DownloadModelOptions, downloadModel } from './model-download.js';
import { HttpByteSource } from './http-source.js';
import { IdbByteSource } from './idb-byte-source.js';
import { isStoredCopyDamagedError } from './stored-model-check.js';
import { openBlobParts, openPartsAsOne, openSingleBlob, openSplitUrls, splitPartUrls } from './split-model.js';

export type { ByteSource } from './byte-source.js';
export { HttpByteSource } from './http-source.js';
export type { DownloadPhase, DownloadProgress, ProgressCallback } from './download-progress.js';
export { IdbByteSource } from './idb-byte-source.js';
export { downloadModel, type DownloadModelOptions } from './model-download.js';
export {
  type ModelManifest,
  type ModelStoreOptions,
  type StorageEstimator,
  type StorageUsage,
  deleteModel,
  listModels,
  readManifest,
  storageUsage,
} from './model-store.js';
export { deleteSplitModel, splitPartUrls } from './split-model.js';
// The persisted prompt cache's store (prompt-cache-store.ts) is exported by src/index.ts directly, not from here: this
// barrel is in every engine bundle, and that store belongs to the lazy persisted-cache chunk.
export { sha256Hex } from './sha256.js';

/** Options of `openModelSource`: those of `downloadModel` (store, progress, range reader) plus the cache switch. */
export interface OpenModelSourceOptions extends DownloadModelOptions {
  /**
   * Cache URLs in the IndexedDB model store (default true where `indexedDB` exists). When off, a URL is read directly
   * with HTTP range requests and nothing is stored.
   */
  cache?: boolean;
  /** When a cached copy is checked against its recorded checksums: see `IdbByteSourceOptions.verify` (default 'open'). */
  verify?: 'open' | 'read';
  /** Chunks of a cached copy read ahead: see `IdbByteSourceOptions.readAhead`. */
  readAhead?: number;
}

/**
 * What `openModelSource` accepts: a URL (absolute, or relative to the page), a `Blob`/`File`, or a path in Node; or
 * the parts of a split model as `File`s/`Blob`s in order. A URL or path named like the first part of a split model
 * (`name-00001-of-00003.gguf`) opens the whole set.
 */
export type ModelInput = string | URL | Blob | readonly Blob[];

/** A local file in Node (`NodeFileSource`, a chunk of its own: browser bundles never fetch it). */
async function openNodeFile(path: string, signal: AbortSignal | undefined): Promise<ByteSource> {
  return (await import('./node-file-source.js')).NodeFileSource.open(path, signal);
}

/**
 * Opens `model` as a `ByteSource`:
 * - `Blob`/`File` → `BlobByteSource` (read slice by slice);
 * - a URL → downloaded into the model store (resuming, verified) and served by `IdbByteSource`, or with `cache: false`
 *   or no IndexedDB, read live by `HttpByteSource`;
 * - a string in Node that is not an http(s) URL → `NodeFileSource` (`file:` URLs included);
 * - a string in a browser → a URL relative to the page.
 */
export async function openModelSource(model: ModelInput, options: OpenModelSourceOptions = {}): Promise<ByteSource> {
  throwIfAborted(options.signal, 'opening the model');
  if (Array.isArray(model)) return openBlobParts(model as readonly Blob[], options.signal);
  if (typeof Blob !== 'undefined' && model instanceof Blob) return openSingleBlob(model);
  const isNode =
    typeof process !== 'undefined' && typeof process.versions?.node === 'string' && typeof window === 'undefined';
  let url: URL;
  if (model instanceof URL) {
    url = model;
  } else if (typeof model === 'string' && /^[a-z][a-z0-9+.-]*:/i.test(model) && !/^[a-z]:[\\/]/i.test(model)) {
    url = new URL(model);
  } else if (typeof model === 'string' && isNode) {
    const parts = splitPartUrls(model);
    if (parts !== null)
      return openPartsAsOne(
        parts.map((p) => () => openNodeFile(p, options.signal)),
        options.signal,
      );
    return openNodeFile(model, options.signal);
  } else if (typeof model === 'string' && typeof location !== 'undefined') {
    url = new URL(model, location.href);
  } else {
    throw new LlmError(
      'invalid-request',
      `openModelSource: cannot open ${String(model)}; pass a URL, a File/Blob, or (in Node) a path`,
    );
  }
  if (url.protocol === 'file:') {
    if (!isNode)
      throw new LlmError(
        'invalid-request',
        `openModelSource: ${url.href} is a file: URL; in a browser pass the File instead`,
      );
    const { fileURLToPath } = await import('node:url');
    const path = fileURLToPath(url);
    const parts = splitPartUrls(path);
    if (parts !== null)
      return openPartsAsOne(
        parts.map((p) => () => openNodeFile(p, options.signal)),
        options.signal,
      );
    return openNodeFile(path, options.signal);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:' && url.protocol !== 'blob:') {
    throw new LlmError(
      'invalid-request',
      `openModelSource: unsupported URL scheme ${url.protocol} in ${url.href}; use http(s)`,
    );
  }
  const canCache =
    (options.cache ?? true) &&
    url.protocol !== 'blob:' &&
    (options.store !== undefined || typeof indexedDB !== 'undefined');
  const parts = url.protocol === 'blob:' ? null : splitPartUrls(url.href);
  if (parts !== null) return openSplitUrls(parts, { ...options, cache: canCache });
  if (!canCache) return HttpByteSource.open(url, options);
  await downloadModel(url, options);
  try {
    return await IdbByteSource.open(url, options);
  } catch (e) {
    // A stored copy that fails its checksums is never served: fetch the damaged part again (once), then reopen.
    if (!isStoredCopyDamagedError(e)) throw e;
    await downloadModel(url, options);
    return IdbByteSource.open(url, options);
  }
}
