/**
 * Test-page entry for test/e2e/idb-load.spec.ts: loads stored models the way `createEngine` does — through the
 * chunk worker of the model store (src/io/idb-chunk-reader.ts), in real Chromium — and reports plain data: the bytes'
 * sha256, how many workers the page started, the error code/reason of a damaged or aborted load.
 */

import { createStore, get, set } from 'idb-keyval';
import { createEngine } from '../../../src/api/create-engine.js';
import { LlmError } from '../../../src/errors.js';
import { IdbByteSource, downloadModel, listModels, sha256Hex } from '../../../src/io/index.js';
import { storedChunkBytes } from '../../helpers/stored-chunk.js';

/** Workers started by this page so far (the chunk worker is the only kind it starts here). */
let workersStarted = 0;
const NativeWorker = window.Worker;
window.Worker = class extends NativeWorker {
  constructor(url: string | URL, options?: WorkerOptions) {
    super(url, options);
    workersStarted++;
  }
};

/** The error's code and `details.reason`/`details.chunk`, or the message of anything that is not an LlmError. */
function outcome(e: unknown): { code: string; reason: unknown; chunk: unknown; check?: string } {
  if (e instanceof LlmError) {
    const r = { code: e.code, reason: e.details?.reason ?? null, chunk: e.details?.chunk ?? null };
    // Which digest caught a damaged chunk: the fast checksum (computed in the chunk worker) or the sha256.
    const check = /has (checksum|sha256) /.exec(e.message)?.[1];
    return check === undefined ? r : { ...r, check };
  }
  return { code: 'unexpected', reason: String(e), chunk: null };
}

const api = {
  /** Stores `url` in `chunkBytes` chunks. */
  async store(url: string, chunkBytes: number): Promise<number> {
    return (await downloadModel(url, { chunkBytes, retryDelayMs: 10 })).chunkPresent.length;
  },
  /** Streams the stored copy in order in 50 KiB pieces as a load does; returns its sha256 and the workers started. */
  async stream(
    url: string,
  ): Promise<{ sha256: string; workers: number } | { code: string; reason: unknown; chunk: unknown }> {
    const before = workersStarted;
    try {
      const src = await IdbByteSource.open(url, { verify: 'read', readAhead: 4 });
      const all = new Uint8Array(src.size);
      for (let at = 0; at < src.size; at += 50_000)
        await src.readInto(at, all.subarray(at, Math.min(src.size, at + 50_000)));
      await src.close();
      return { sha256: sha256Hex(all), workers: workersStarted - before };
    } catch (e) {
      return outcome(e);
    }
  },
  /** `createEngine` on the stored URL (WASM) and a greedy completion of `prompt`; aborted at its `abortAtUpload`-th upload progress event if given. */
  async load(
    url: string,
    prompt: string,
    maxTokens: number,
    abortAtUpload?: number,
  ): Promise<{ ok: true; text: string } | { code: string; reason: unknown; chunk: unknown }> {
    const ctrl = new AbortController();
    let uploads = 0;
    try {
      const engine = await createEngine({
        model: url,
        backend: 'wasm',
        threads: 1,
        contextLength: 64,
        persistedCache: false,
        signal: ctrl.signal,
        onProgress: (p) => {
          if (p.phase === 'upload' && ++uploads === abortAtUpload) ctrl.abort();
        },
      });
      const r = await engine.completions.create({ prompt, max_tokens: maxTokens, temperature: 0 });
      await engine.unload();
      return { ok: true, text: r.choices[0].text };
    } catch (e) {
      return outcome(e);
    }
  },
  /** Flips the low bit of byte `at` of stored chunk `index` (a damaged disk). */
  async tamper(url: string, index: number, at: number): Promise<void> {
    const store = createStore('webgguf', 'models');
    const bytes = await storedChunkBytes(await get(['chunk', url, index], store));
    bytes[at] ^= 1;
    await set(['chunk', url, index], bytes.buffer, store);
  },
  /** Whether chunk `index` of `url` is marked stored. */
  async isStored(url: string, index: number): Promise<boolean> {
    return (await listModels()).find((m) => m.url === url)?.chunkPresent[index] === true;
  },
};

declare global {
  interface Window {
    webggufIdbLoad: typeof api;
  }
}

window.webggufIdbLoad = api;
document.title = 'idb-load ready';
