/**
 * `createWorkerEngine`: the `Engine` interface backed by a Web Worker through Comlink. The model loads and runs in
 * the worker; requests, errors (`LlmError` with code and details), aborts and streams cross transparently.
 * `connectWorkerEngine` does the same over any Comlink endpoint (a MessagePort in tests).
 */

import * as Comlink from 'comlink';
import type { ChatCompletions, Completions, Engine, EngineInfo, EngineOptions, EngineStats, TokenizeOptions } from '../api/engine.js';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, Completion, CompletionChunk, CompletionRequest } from '../api/types.js';
import { LlmError } from '../errors.js';
import './errors.js';
import type { StreamHandle, WireEngineOptions, WorkerEngineApi } from './worker-api.js';

/** Options of `createWorkerEngine`. */
export interface WorkerEngineOptions extends EngineOptions {
  /**
   * The worker to run in: an existing `Worker` running webgguf's worker script (left running by `unload`), or the
   * URL of that script (script-tag use, e.g. next to webgguf.js). Default: the bundled worker.
   */
  readonly worker?: Worker | string | URL;
}

/**
 * Starts the bundled worker script. Pages may start workers only from their own origin, so when webgguf was loaded
 * from another one (the script-tag bundle on a CDN) a same-origin blob module that imports the script is started
 * instead (the script's own URL stays its base, so its chunks and WASM files still resolve next to it).
 */
function startBundledWorker(): Worker {
  const Worker = function (url: URL, options: WorkerOptions): globalThis.Worker {
    const crossOrigin = typeof location !== 'undefined' && /^https?:$/.test(url.protocol) && url.origin !== location.origin;
    const script = crossOrigin ? URL.createObjectURL(new Blob([`import ${JSON.stringify(url.href)};`], { type: 'text/javascript' })) : url;
    return new globalThis.Worker(script, options);
  } as unknown as typeof globalThis.Worker;
  // Keep this literal `new Worker(new URL(…, import.meta.url))` form: bundlers detect it and emit the worker.
  return new Worker(new URL('./worker.ts', import.meta.url), { type: 'module' });
}

/** Starts a worker, loads the model there and returns the engine. */
export async function createWorkerEngine(options: WorkerEngineOptions): Promise<Engine> {
  if (typeof Worker === 'undefined') {
    throw new LlmError('invalid-request', 'createWorkerEngine: this environment has no Web Worker; use createEngine instead');
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
    throw new LlmError('invalid-request', `createWorkerEngine: could not start the worker${given === undefined ? ' bundled with webgguf' : ` at ${String(given)}`} (${e instanceof Error ? e.message : String(e)}); pass worker: the URL of webgguf's worker script, or an existing Worker`, {
      cause: e,
    });
  }
  const owned = !(given instanceof Worker);
  try {
    return await connectWorkerEngine(worker, options, () => {
      if (owned) worker.terminate();
    });
  } catch (e) {
    if (owned) worker.terminate();
    throw e;
  }
}

/** A model URL relative to the page made absolute (the worker's own base is its script's URL, or a blob: URL). */
function pageRelative(model: string): string {
  if (typeof location === 'undefined' || typeof document === 'undefined') return model;
  try {
    return new URL(model, location.href).href;
  } catch {
    return model;
  }
}

/** Loads the model in the engine exposed at `endpoint`; `onUnload` runs after the remote engine is unloaded. */
export async function connectWorkerEngine(endpoint: Comlink.Endpoint, options: EngineOptions, onUnload?: () => void): Promise<Engine> {
  const remote = Comlink.wrap<WorkerEngineApi>(endpoint);
  const { onProgress, signal, model, gpu: _gpu, ...rest } = options;
  const wire: WireEngineOptions = { ...rest, model: model instanceof URL ? model.href : typeof model === 'string' ? pageRelative(model) : model };
  const info = await remote.load(wire, onProgress ? Comlink.proxy(onProgress) : undefined, signal);
  return new RemoteEngine(remote, info, onUnload);
}

/** Wraps a remote iterator as a local async iterable; closing it early cancels the request in the worker. */
function localStream<T>(handle: Comlink.Remote<StreamHandle<T>>): AsyncIterable<T> {
  let released = false;
  const release = (): void => {
    if (!released) {
      released = true;
      handle[Comlink.releaseProxy]();
    }
  };
  const iterator: AsyncIterableIterator<T> = {
    async next() {
      if (released) return { value: undefined, done: true };
      try {
        const r = (await handle.next()) as IteratorResult<T>;
        if (r.done) release();
        return r;
      } catch (e) {
        release();
        throw e;
      }
    },
    async return() {
      if (!released) {
        try {
          await handle.return();
        } finally {
          release();
        }
      }
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}

/** `Engine` whose work happens on the other side of a Comlink endpoint. */
class RemoteEngine implements Engine {
  readonly info: EngineInfo;
  readonly chat: { readonly completions: ChatCompletions };
  readonly completions: Completions;
  private unloading: Promise<void> | null = null;

  constructor(
    private readonly remote: Comlink.Remote<WorkerEngineApi>,
    info: EngineInfo,
    private readonly onUnload?: () => void,
  ) {
    this.info = info;
    const chatCreate = async (req: ChatCompletionRequest): Promise<ChatCompletion | AsyncIterable<ChatCompletionChunk>> => {
      const { signal, ...wire } = req ?? ({} as ChatCompletionRequest);
      const r = await this.remote.chat(wire, signal);
      return req.stream === true ? localStream(r as unknown as Comlink.Remote<StreamHandle<ChatCompletionChunk>>) : (r as ChatCompletion);
    };
    const textCreate = async (req: CompletionRequest): Promise<Completion | AsyncIterable<CompletionChunk>> => {
      const { signal, ...wire } = req ?? ({} as CompletionRequest);
      const r = await this.remote.completion(wire, signal);
      return req.stream === true ? localStream(r as unknown as Comlink.Remote<StreamHandle<CompletionChunk>>) : (r as Completion);
    };
    this.chat = { completions: { create: chatCreate as ChatCompletions['create'] } };
    this.completions = { create: textCreate as Completions['create'] };
  }

  tokenize(text: string, options?: TokenizeOptions): Promise<number[]> {
    return this.remote.tokenize(text, options);
  }

  detokenize(ids: readonly number[], options?: { readonly renderSpecial?: boolean }): Promise<string> {
    return this.remote.detokenize([...ids], options);
  }

  stats(): Promise<EngineStats> {
    return this.remote.stats();
  }

  unload(): Promise<void> {
    this.unloading ??= (async () => {
      try {
        await this.remote.unload();
      } finally {
        this.remote[Comlink.releaseProxy]();
        this.onUnload?.();
      }
    })();
    return this.unloading;
  }
}
