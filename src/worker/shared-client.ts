/**
 * `createSharedWorkerEngine`: the `Engine` interface backed by one `SharedWorker` for every tab of an origin, so a
 * second tab asking for the same model (same URL and options) reuses the loaded one instead of loading a copy. The
 * worker side is `SharedEngineHub` (shared-hub.ts), in the same worker script as the dedicated worker. Where
 * `SharedWorker` is missing (or the script is on another origin) it falls back to `createWorkerEngine`.
 */

import * as Comlink from 'comlink';
import type { Engine } from '../api/engine.js';
import { LlmError } from '../errors.js';
import {
  bundledWorkerUrl,
  createWorkerEngine,
  isCrossOrigin,
  isLoadFailure,
  type WorkerEngineOptions,
} from './client.js';
import './errors.js';
import { RemoteEngine, msOption, unloadTimeoutOf, wireOptionsOf } from './remote-engine.js';
import type { SharedEngineApi } from './shared-hub.js';

/** Options of `createSharedWorkerEngine`. */
export interface SharedWorkerEngineOptions extends Omit<WorkerEngineOptions, 'worker'> {
  /**
   * The URL of webgguf's worker script (script-tag use: e.g. next to webgguf.js). Default: the bundled worker.
   * Tabs share one engine only when they start the same script URL with the same `name`.
   */
  readonly worker?: string | URL;
  /** The SharedWorker's name: tabs using different names get different workers. Default 'webgguf'. */
  readonly name?: string;
  /**
   * How long to wait for the shared worker to answer at all, in ms (default 10000). One that does not (hung by a
   * template render or kernel of another tab, or busy in one very long step) is left alone and this engine falls
   * back to a dedicated worker of its own.
   */
  readonly connectTimeoutMs?: number;
}

/** How an engine of `createSharedWorkerEngine` runs. */
export interface EngineSharing {
  /** 'shared': in the origin's SharedWorker; 'dedicated': the fallback, a Worker of this tab only. */
  readonly mode: 'shared' | 'dedicated';
  /** True when the model was already loaded (or loading) for another tab or engine and this one attached to it. */
  readonly attached: boolean;
  /** Why a dedicated worker is used ('dedicated' mode only). */
  readonly reason?: 'no-shared-worker' | 'cross-origin-script' | 'shared-worker-unresponsive';
}

/** The engine of `createSharedWorkerEngine`: an `Engine` that also says whether it is shared. */
export interface SharedWorkerEngine extends Engine {
  /** Shared or dedicated, attached or loaded here (fixed at creation). */
  readonly sharing: EngineSharing;
}

/** The Web Lock manager of this page, when it has one. */
function lockManager(): LockManager | null {
  return (typeof navigator !== 'undefined' && (navigator as Navigator & { locks?: LockManager }).locks) || null;
}

/** Adds `sharing` to an engine. */
function withSharing(engine: Engine, sharing: EngineSharing): SharedWorkerEngine {
  return Object.defineProperty(engine, 'sharing', { value: sharing, enumerable: true }) as SharedWorkerEngine;
}

/**
 * Loads `options.model` in the origin's shared worker and returns the engine; a tab (or another engine of this tab)
 * asking for the same model with the same options attaches to the one already loaded or loading (its progress
 * events included), and a different model or options loads a separate engine in the same worker — no one else's
 * engine or running generation is touched. Requests from all tabs take turns round-robin (one runs at a time, as in
 * every engine). `unload()`, or the tab closing, ends only this tab's requests; the model stays loaded while any
 * other tab uses it.
 *
 * Where `SharedWorker` is missing (Chrome on Android, older Safari), or the worker script is on another origin (a
 * CDN: a SharedWorker must be same-origin), it falls back to `createWorkerEngine` (`engine.sharing.mode` says which).
 *
 * A hung shared worker (a template render or kernel that never returns) cannot be terminated from a page: `unload()`
 * still resolves after `unloadTimeoutMs` and this tab's port and lock are let go; the browser ends the worker once
 * every tab that connected to it has closed. Until then, new engines that get no answer within `connectTimeoutMs` use a dedicated
 * worker of their own (or pass another `name` for a fresh shared worker).
 */
export async function createSharedWorkerEngine(options: SharedWorkerEngineOptions): Promise<SharedWorkerEngine> {
  if (options === null || typeof options !== 'object') {
    throw new LlmError('invalid-request', "createSharedWorkerEngine: options with 'model' are required", {
      details: { field: 'model' },
    });
  }
  const unloadTimeoutMs = unloadTimeoutOf(options.unloadTimeoutMs, 'createSharedWorkerEngine');
  const connectTimeoutMs = msOption(options.connectTimeoutMs, 'connectTimeoutMs', 'createSharedWorkerEngine', 10_000);
  const { worker: given, name = 'webgguf' } = options;
  const dedicated = async (reason: NonNullable<EngineSharing['reason']>): Promise<SharedWorkerEngine> =>
    withSharing(await createWorkerEngine(options), { mode: 'dedicated', attached: false, reason });
  if (typeof SharedWorker === 'undefined') return dedicated('no-shared-worker');
  let url: URL;
  try {
    url =
      given !== undefined
        ? new URL(given, typeof location !== 'undefined' ? location.href : undefined)
        : bundledWorkerUrl();
  } catch (e) {
    throw new LlmError('invalid-request', `createSharedWorkerEngine: worker '${String(given)}' is not a valid URL`, {
      cause: e,
      details: { field: 'worker' },
    });
  }
  if (isCrossOrigin(url)) return dedicated('cross-origin-script');
  let worker: SharedWorker;
  try {
    worker = new SharedWorker(url, { type: 'module', name });
  } catch (e) {
    throw new LlmError(
      'invalid-request',
      `createSharedWorkerEngine: could not start the shared worker at ${url.href} (${e instanceof Error ? e.message : String(e)}); pass worker: the URL of webgguf's worker script`,
      {
        cause: e,
      },
    );
  }
  const port = worker.port;
  const remote = Comlink.wrap<SharedEngineApi>(port);

  // The page holds a Web Lock for as long as this engine lives; the worker queues for it to learn when the page dies.
  let releaseLock = (): void => {};
  let lockName: string | null = null;
  const locks = lockManager();
  if (locks) {
    lockName = `webgguf-engine-${crypto.randomUUID()}`;
    const held = new Promise<void>((resolve) => (releaseLock = resolve));
    await new Promise<void>((granted, failed) => {
      locks
        .request(lockName as string, () => {
          granted();
          return held;
        })
        .catch(failed);
    }).catch(() => {
      lockName = null;
    });
  }
  const onPageHide = (e: PageTransitionEvent): void => {
    if (!e.persisted) void remote.bye().catch(() => {});
  };
  if (typeof addEventListener === 'function') addEventListener('pagehide', onPageHide);
  const close = (): void => {
    if (typeof removeEventListener === 'function') removeEventListener('pagehide', onPageHide);
    releaseLock();
    port.close();
  };

  // A script that fails to load or run reports only an `error` event on the SharedWorker: fail instead of waiting.
  let onError = (_e: Event): void => {};
  const failed = new Promise<never>((_, reject) => {
    onError = (e) => {
      if (isLoadFailure(e))
        reject(
          new LlmError(
            'network',
            `createSharedWorkerEngine: the shared worker script at ${url.href} failed to load or start`,
            { details: { url: url.href } },
          ),
        );
    };
    worker.addEventListener('error', onError);
  });
  let answered = true;
  try {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const silent = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), connectTimeoutMs)));
    answered = await Promise.race([remote.hello(lockName).then(() => true), failed, silent]);
    clearTimeout(timer);
    if (!answered) throw new LlmError('aborted', 'the shared worker did not answer');
    const { onProgress, signal } = options;
    const info = await Promise.race([
      remote.load(wireOptionsOf(options), onProgress ? Comlink.proxy(onProgress) : undefined, signal),
      failed,
    ]);
    const sharing = await remote.sharing();
    worker.removeEventListener('error', onError);
    return withSharing(new RemoteEngine(remote, info, close, unloadTimeoutMs), {
      mode: 'shared',
      attached: sharing.attached,
    });
  } catch (e) {
    worker.removeEventListener('error', onError);
    void remote.unload().catch(() => {});
    setTimeout(close, 0);
    if (!answered) return dedicated('shared-worker-unresponsive');
    throw e;
  }
}
