/**
 * `createWorkerEngine`: the `Engine` interface backed by a Web Worker through Comlink. The model loads and runs in
 * the worker; requests, errors (`LlmError` with code and details), aborts and streams cross transparently.
 * `connectWorkerEngine` does the same over any Comlink endpoint (a MessagePort in tests).
 */

import * as Comlink from 'comlink';
import type { Engine, EngineOptions } from '../api/engine.js';
import { LlmError } from '../errors.js';
import './errors.js';
import { RemoteEngine, type UnloadHook, unloadTimeoutOf, wireOptionsOf } from './remote-engine.js';
import type { WorkerEngineApi } from './worker-api.js';

/** Options of `createWorkerEngine`. */
export interface WorkerEngineOptions extends EngineOptions {
  /**
   * The worker to run in: an existing `Worker` running webgguf's worker script (left running by `unload`), or the
   * URL of that script (script-tag use, e.g. next to webgguf.js). Default: the bundled worker.
   */
  readonly worker?: Worker | string | URL;
  /**
   * How long `unload()` waits for the worker to answer, in ms (default 5000). A worker that does not answer in time
   * (a hung template render or kernel) is terminated — a given `Worker` too — and `unload()` resolves anyway.
   */
  readonly unloadTimeoutMs?: number;
}

/**
 * The URL of the worker script bundled with webgguf (one script for the dedicated and the shared worker). The
 * literal `new Worker(new URL(…, import.meta.url))` below is what bundlers detect to emit the script; the local
 * `Worker` only records the URL they put there.
 */
export function bundledWorkerUrl(): URL {
  let url: URL | undefined;
  // biome-ignore lint/complexity/useArrowFunction: called with `new`, so it must be a constructible function
  const Worker = function (u: URL) {
    url = u;
  } as unknown as typeof globalThis.Worker;
  new Worker(new URL('./worker.ts', import.meta.url), { type: 'module' });
  if (!url) throw new Error('webgguf: the bundled worker URL was not recorded');
  return url;
}

/**
 * True for the `error` event of a worker whose script could not be fetched or started (a plain `Event`); an uncaught
 * error inside a running worker comes as an `ErrorEvent` with a message and leaves the worker answering.
 */
export function isLoadFailure(e: Event): boolean {
  return !(typeof ErrorEvent !== 'undefined' && e instanceof ErrorEvent && e.message);
}

/** True when `url` is on another http(s) origin than the page (a CDN): pages may not start workers from there. */
export function isCrossOrigin(url: URL): boolean {
  return typeof location !== 'undefined' && /^https?:$/.test(url.protocol) && url.origin !== location.origin;
}

/**
 * Starts the bundled worker script. Pages may start workers only from their own origin, so when webgguf was loaded
 * from another one (the script-tag bundle on a CDN) a same-origin blob module that imports the script is started
 * instead (the script's own URL stays its base, so its chunks and WASM files still resolve next to it).
 */
function startBundledWorker(): Worker {
  const url = bundledWorkerUrl();
  const script = isCrossOrigin(url)
    ? URL.createObjectURL(new Blob([`import ${JSON.stringify(url.href)};`], { type: 'text/javascript' }))
    : url;
  return new Worker(script, { type: 'module' });
}

/** Starts a worker, loads the model there and returns the engine. */
export async function createWorkerEngine(options: WorkerEngineOptions): Promise<Engine> {
  if (typeof Worker === 'undefined') {
    throw new LlmError(
      'invalid-request',
      'createWorkerEngine: this environment has no Web Worker; use createEngine instead',
    );
  }
  const given = options.worker;
  let worker: Worker;
  try {
    worker =
      given instanceof Worker
        ? given
        : given !== undefined
          ? new Worker(given, { type: 'module' })
          : startBundledWorker();
  } catch (e) {
    throw new LlmError(
      'invalid-request',
      `createWorkerEngine: could not start the worker${given === undefined ? ' bundled with webgguf' : ` at ${String(given)}`} (${e instanceof Error ? e.message : String(e)}); pass worker: the URL of webgguf's worker script, or an existing Worker`,
      {
        cause: e,
      },
    );
  }
  const owned = !(given instanceof Worker);
  // A script that fails to load or to start reports only an `error` event: fail the load instead of waiting forever.
  let onError = (_e: Event): void => {};
  const failed = new Promise<never>((_, reject) => {
    onError = (e) => {
      if (isLoadFailure(e))
        reject(
          new LlmError(
            'network',
            `createWorkerEngine: the worker script${given instanceof Worker ? '' : ` at ${String(given ?? 'bundled with webgguf')}`} failed to load or start`,
          ),
        );
    };
  });
  worker.addEventListener('error', onError);
  try {
    // An owned worker ends with its engine; any worker that did not answer `unload()` in time is terminated.
    return await Promise.race([
      connectWorkerEngine(worker, options, (answered) => {
        if (owned || !answered) worker.terminate();
      }),
      failed,
    ]);
  } catch (e) {
    if (owned) worker.terminate();
    throw e;
  } finally {
    worker.removeEventListener('error', onError);
  }
}

/** Loads the model in the engine exposed at `endpoint`; `onUnload` runs after the remote engine is unloaded. */
export async function connectWorkerEngine(
  endpoint: Comlink.Endpoint,
  options: EngineOptions & { readonly unloadTimeoutMs?: number },
  onUnload?: UnloadHook,
): Promise<Engine> {
  const unloadTimeoutMs = unloadTimeoutOf(options.unloadTimeoutMs, 'connectWorkerEngine');
  const remote = Comlink.wrap<WorkerEngineApi>(endpoint);
  const { onProgress, signal } = options;
  const info = await remote.load(wireOptionsOf(options), onProgress ? Comlink.proxy(onProgress) : undefined, signal);
  return new RemoteEngine(remote, info, onUnload, unloadTimeoutMs);
}
