/**
 * Test-page entry for test/e2e/idb.spec.ts: bundles src/io and exposes a few async helpers on `window.webggufIo`
 * whose results are plain data, so the spec drives the real range reader and IndexedDB store via `page.evaluate`.
 */

import { createStore, get, set } from 'idb-keyval';
import { LlmError } from '../../../src/errors.js';
import {
  IdbByteSource,
  deleteModel,
  downloadModel,
  listModels,
  openModelSource,
  sha256Hex,
} from '../../../src/io/index.js';
import { storedChunkBytes } from '../../helpers/stored-chunk.js';

/** Outcome of a download: the manifest's chunk map on success, the error's code and message otherwise. */
export interface DownloadOutcome {
  readonly ok: boolean;
  readonly code: string | null;
  readonly message: string | null;
  readonly chunkPresent: readonly boolean[];
}

const api = {
  /**
   * Downloads `url` into the store in `chunkBytes` chunks; with `abortAfterBytes`, aborts once that many bytes have
   * been loaded; `stallTimeoutMs` shortens the reader's stall timeout.
   */
  async download(
    url: string,
    chunkBytes: number,
    abortAfterBytes?: number,
    stallTimeoutMs?: number,
  ): Promise<DownloadOutcome> {
    const controller = new AbortController();
    try {
      const m = await downloadModel(url, {
        chunkBytes,
        stallTimeoutMs,
        retryDelayMs: 10,
        maxInFlight: 2,
        signal: controller.signal,
        onProgress: (p) => {
          if (abortAfterBytes !== undefined && p.phase === 'download' && p.loadedBytes >= abortAfterBytes)
            controller.abort();
        },
      });
      return { ok: true, code: null, message: null, chunkPresent: m.chunkPresent };
    } catch (e) {
      const entry = (await listModels()).find((m) => m.url === url);
      return {
        ok: false,
        code: e instanceof LlmError ? e.code : 'unexpected',
        message: String(e),
        chunkPresent: entry?.chunkPresent ?? [],
      };
    }
  },
  /** Opens `url` the way an app would (store-backed) and returns the sha256 of all its bytes. */
  async readBackSha(url: string): Promise<{ sha256: string; kind: string }> {
    const source = await openModelSource(url);
    const bytes = await source.read(0, source.size);
    return { sha256: sha256Hex(bytes), kind: source instanceof IdbByteSource ? 'idb' : source.constructor.name };
  },
  /** The stored entries as `{ url, complete, chunkPresent }`. */
  async list(): Promise<{ url: string; complete: boolean; chunkPresent: readonly boolean[] }[]> {
    return (await listModels()).map(({ url, complete, chunkPresent }) => ({ url, complete, chunkPresent }));
  },
  /** Flips the low bit of byte `at` of stored chunk `index` of `url` in the default store (a damaged disk). */
  async tamper(url: string, index: number, at: number): Promise<void> {
    const store = createStore('webgguf', 'models');
    const bytes = await storedChunkBytes(await get(['chunk', url, index], store));
    bytes[at] ^= 1;
    await set(['chunk', url, index], bytes.buffer, store);
  },
  /** The error code and reason `IdbByteSource.open` rejects with, or null when it opens. */
  async openError(url: string): Promise<{ code: string; reason: unknown } | null> {
    try {
      await IdbByteSource.open(url);
      return null;
    } catch (e) {
      return {
        code: e instanceof LlmError ? e.code : 'unexpected',
        reason: e instanceof LlmError ? e.details?.reason : null,
      };
    }
  },
  /** Milliseconds taken by `IdbByteSource.open` with `verify`, then by one read of the whole file. */
  async timeOpen(url: string, verify: 'open' | 'read'): Promise<{ openMs: number; readMs: number }> {
    const t0 = performance.now();
    const source = await IdbByteSource.open(url, { verify });
    const t1 = performance.now();
    await source.read(0, source.size);
    return { openMs: t1 - t0, readMs: performance.now() - t1 };
  },
  deleteModel,
};

declare global {
  interface Window {
    webggufIo: typeof api;
  }
}

window.webggufIo = api;
document.getElementById('status')!.textContent = 'ready';
