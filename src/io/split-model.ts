/**
 * Opening a `gguf-split` model (`name-00001-of-0000N.gguf` …) as one `ByteSource`: from several `File`s/`Blob`s, from
 * the first part's path in Node, or from the first part's URL — the other parts' URLs follow the name pattern. URLs go
 * through the IndexedDB model store part by part (each part resumable and checksummed like any model file), several
 * parts at a time; the set is then validated (`SplitByteSource.open`). A set that turns out bad — a missing part, a
 * part of another model, parts out of order — is removed from the store whole, so nothing is left half-stored.
 */

import { LlmError, isLlmError, throwIfAborted } from '../errors.js';
import { parseSplitName, splitPartNames } from '../gguf/split-metadata.js';
import { linkSignals } from './abort-signals.js';
import { BlobByteSource } from './blob-source.js';
import type { ByteSource } from './byte-source.js';
import { reportProgress } from './download-progress.js';
import { HttpByteSource } from './http-source.js';
import { IdbByteSource } from './idb-byte-source.js';
import { type DownloadModelOptions, downloadModel } from './model-download.js';
import { type ModelStoreOptions, deleteModel, readManifest, updateManifest } from './model-store.js';
import type { SplitByteSource } from './split-source.js';
import { isStoredCopyDamagedError } from './stored-model-check.js';

/** Parts downloaded at the same time (each part's own download is itself parallel by chunks). */
const PARALLEL_PARTS = 3;

/**
 * The URLs (or paths) of every part of the split set `name` belongs to, first part first; null when `name` is not
 * named like a part (`…-00001-of-00003.gguf`) of a set of 2 or more.
 */
export function splitPartUrls(name: string): string[] | null {
  return splitPartNames(name);
}

/** Opens every part with `openers` (in parallel), then validates and merges them; on any failure closes what opened. */
export async function openPartsAsOne(
  openers: readonly (() => Promise<ByteSource>)[],
  signal?: AbortSignal,
): Promise<SplitByteSource> {
  const settled = await Promise.allSettled(openers.map((open) => open()));
  const opened = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  try {
    if (failed !== undefined) throw failed.reason;
    // The merged view of a split model (and the GGUF header writer it uses) is a chunk fetched only for split models.
    const { SplitByteSource } = await import('./split-source.js');
    return await SplitByteSource.open(opened, signal);
  } catch (e) {
    await Promise.all(opened.map((p) => p.close?.().catch(() => undefined)));
    throw e;
  }
}

/** Opens `Blob`/`File` parts (in order) as one model. One blob is returned as is. */
export async function openBlobParts(blobs: readonly Blob[], signal?: AbortSignal): Promise<ByteSource> {
  if (blobs.length === 0)
    throw new LlmError(
      'invalid-request',
      'openModelSource: the model is an empty list of files; pass every part of the split model',
    );
  if (!blobs.every((b) => typeof Blob !== 'undefined' && b instanceof Blob)) {
    throw new LlmError(
      'invalid-request',
      'openModelSource: a list of models must hold only File/Blob objects (the parts of one split model)',
    );
  }
  if (blobs.length === 1) return openSingleBlob(blobs[0]);
  return openPartsAsOne(
    blobs.map((b) => async () => new BlobByteSource(b)),
    signal,
  );
}

/** A lone `Blob`; a `File` named like one part of a larger set is refused with a message that says what to pass. */
export function openSingleBlob(blob: Blob): ByteSource {
  const name = typeof File !== 'undefined' && blob instanceof File ? blob.name : '';
  const split = parseSplitName(name);
  if (split !== null && split.count > 1) {
    throw new LlmError(
      'gguf-invalid',
      `${name} is part ${split.part} of a ${split.count}-part split model; pass all ` +
        `${split.count} files together (model: [file1, file2, …])`,
      { details: { reason: 'split', part: split.part, expected: split.count } },
    );
  }
  return new BlobByteSource(blob);
}

/** Options of `openSplitUrls`. */
export interface OpenSplitUrlsOptions extends DownloadModelOptions {
  /** Store the parts in the model store (true) or read them live with range requests (false). */
  readonly cache: boolean;
}

/**
 * Opens the parts at `urls` (first part first) as one model. With `cache`, every part is made complete in the model
 * store first (several at a time, each resumable), with aggregated `download` progress; a bad set is deleted.
 */
export async function openSplitUrls(urls: readonly string[], options: OpenSplitUrlsOptions): Promise<SplitByteSource> {
  const { signal } = options;
  throwIfAborted(signal, 'opening the split model');
  if (!options.cache)
    return openPartsAsOne(
      urls.map((u) => () => HttpByteSource.open(u, options)),
      signal,
    );
  try {
    await downloadParts(urls, options);
    const source = await openPartsAsOne(
      urls.map((u) => () => openStoredPart(u, options)),
      signal,
    );
    await Promise.all(
      urls.map(async (url, i) => {
        const m = await readManifest(url, options);
        if (m !== undefined && m.split?.first !== urls[0]) {
          await updateManifest(
            url,
            m.downloadId,
            (x) => ({ ...x, split: { first: urls[0], part: i + 1, count: urls.length } }),
            options,
          );
        }
      }),
    );
    return source;
  } catch (e) {
    if (isPermanentFailure(e)) await deleteParts(urls, options);
    throw e;
  }
}

/** Deletes every part of the split set whose first part is `url` from the model store; resolves how many existed. */
export async function deleteSplitModel(url: string, options?: ModelStoreOptions): Promise<number> {
  const urls = splitPartUrls(url) ?? [url];
  const deleted = await Promise.all(urls.map((u) => deleteModel(u, options)));
  return deleted.filter(Boolean).length;
}

async function deleteParts(urls: readonly string[], options: ModelStoreOptions): Promise<void> {
  await Promise.all(urls.map((u) => deleteModel(u, options).catch(() => false)));
}

/** A failure that retrying will not fix: a bad set, or a part the server does not have (HTTP 4xx). */
function isPermanentFailure(e: unknown): boolean {
  if (isLlmError(e, 'gguf-invalid')) return true;
  if (!isLlmError(e, 'network')) return false;
  const status = (e.details as { status?: unknown } | undefined)?.status;
  return typeof status === 'number' && status >= 400 && status < 500 && status !== 408 && status !== 429;
}

/** Downloads every part into the store, `PARALLEL_PARTS` at a time; the first failure stops the others. */
async function downloadParts(urls: readonly string[], options: DownloadModelOptions): Promise<void> {
  const link = linkSignals(options.signal);
  const loaded = new Map<string, { loaded: number; total: number }>();
  const report = (): void => {
    let loadedBytes = 0;
    let totalBytes = 0;
    for (const p of loaded.values()) {
      loadedBytes += p.loaded;
      totalBytes += p.total;
    }
    reportProgress(options.onProgress, { phase: 'download', loadedBytes, totalBytes, url: urls[0] });
  };
  let next = 0;
  let failure: { error: unknown } | null = null;
  const worker = async (): Promise<void> => {
    while (failure === null && next < urls.length) {
      const url = urls[next++];
      try {
        const { sha256: _whole, ...rest } = options; // a sha256 names one file, not a set of parts
        void _whole;
        const m = await downloadModel(url, {
          ...rest,
          signal: link.signal,
          onProgress: (p) => {
            if (p.phase !== 'download' && p.phase !== 'cached') return;
            const prev = loaded.get(url);
            loaded.set(url, {
              loaded: Math.max(prev?.loaded ?? 0, p.loadedBytes),
              total: Math.max(prev?.total ?? 0, p.totalBytes),
            });
            report();
          },
        });
        loaded.set(url, { loaded: m.size, total: m.size });
        report();
      } catch (e) {
        failure ??= { error: e };
        link.abort(e);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(PARALLEL_PARTS, urls.length) }, worker));
  } finally {
    link.dispose();
  }
  if (failure !== null) throw (failure as { error: unknown }).error;
  report();
}

/** Opens one stored part; a part failing its checksums is downloaded again once, like a single model file. */
async function openStoredPart(url: string, options: DownloadModelOptions): Promise<ByteSource> {
  try {
    return await IdbByteSource.open(url, options);
  } catch (e) {
    if (!isStoredCopyDamagedError(e)) throw e;
    const { sha256: _whole, ...rest } = options;
    void _whole;
    await downloadModel(url, rest);
    return IdbByteSource.open(url, options);
  }
}
