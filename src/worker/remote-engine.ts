/**
 * `RemoteEngine`: the `Engine` interface over a Comlink proxy of a `WorkerEngineApi` (a dedicated worker's or one
 * tab's port of the shared worker). Requests, streams, aborts and errors cross through Comlink and the transfer
 * handlers of `errors.ts`; `unload()` waits for the other side at most `unloadTimeoutMs`, then gives up on it (the
 * `onUnload` hook is told whether it answered, so a dedicated worker that did not is terminated).
 */

import * as Comlink from 'comlink';
import type {
  ChatCompletions,
  Completions,
  Engine,
  EngineInfo,
  EngineOptions,
  EngineStats,
  TokenizeOptions,
} from '../api/engine.js';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionRequest,
  Completion,
  CompletionChunk,
  CompletionRequest,
} from '../api/types.js';
import type { EmbeddingResponse, Embeddings, RerankRequest, RerankResponse } from '../api/embedding-types.js';
import { LlmError } from '../errors.js';
import './errors.js';
import type { StreamHandle, WireEngineOptions, WorkerEngineApi } from './worker-api.js';

/** Default of `unloadTimeoutMs`: how long `unload()` waits for the worker before giving up on it. */
const DEFAULT_UNLOAD_TIMEOUT_MS = 5000;

/** Called once the remote side is unloaded; `answered` is false when it did not answer within the deadline. */
export type UnloadHook = (answered: boolean) => void;

/** Checks a duration option (a finite number of ms ≥ 0) and returns it, or `fallback` when it is not given. */
export function msOption(value: number | undefined, name: string, step: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new LlmError(
      'invalid-request',
      `${step}: option '${name}' must be a finite number of milliseconds ≥ 0, got ${String(value)}`,
      {
        details: { field: name },
      },
    );
  }
  return value;
}

/** Checks `unloadTimeoutMs` and returns it, or the default. */
export function unloadTimeoutOf(value: number | undefined, step: string): number {
  return msOption(value, 'unloadTimeoutMs', step, DEFAULT_UNLOAD_TIMEOUT_MS);
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

/** Engine options as they cross to a worker: no functions, no signal, no GPU object, the model URL absolute. */
export function wireOptionsOf(options: EngineOptions): WireEngineOptions {
  const { onProgress: _p, signal: _s, model, gpu: _gpu, mmproj, ...rest } = options;
  // Options of the worker clients themselves stay on this side.
  const own = rest as Record<string, unknown>;
  for (const k of ['worker', 'name', 'unloadTimeoutMs', 'connectTimeoutMs']) delete own[k];
  const wire = (m: NonNullable<EngineOptions['mmproj']>) =>
    m instanceof URL ? m.href : typeof m === 'string' ? pageRelative(m) : m;
  return { ...rest, model: wire(model), ...(mmproj !== undefined ? { mmproj: wire(mmproj) } : {}) };
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
export class RemoteEngine implements Engine {
  readonly info: EngineInfo;
  readonly chat: { readonly completions: ChatCompletions };
  readonly completions: Completions;
  readonly embeddings: Embeddings;
  private unloading: Promise<void> | null = null;

  constructor(
    private readonly remote: Comlink.Remote<WorkerEngineApi>,
    info: EngineInfo,
    private readonly onUnload?: UnloadHook,
    private readonly unloadTimeoutMs = DEFAULT_UNLOAD_TIMEOUT_MS,
  ) {
    this.info = info;
    const chatCreate = async (
      req: ChatCompletionRequest,
    ): Promise<ChatCompletion | AsyncIterable<ChatCompletionChunk>> => {
      this.assertLoaded('chat.completions.create');
      const { signal, ...wire } = req ?? ({} as ChatCompletionRequest);
      const r = await this.remote.chat(wire, signal);
      return req.stream === true
        ? localStream(r as unknown as Comlink.Remote<StreamHandle<ChatCompletionChunk>>)
        : (r as ChatCompletion);
    };
    const textCreate = async (req: CompletionRequest): Promise<Completion | AsyncIterable<CompletionChunk>> => {
      this.assertLoaded('completions.create');
      const { signal, ...wire } = req ?? ({} as CompletionRequest);
      const r = await this.remote.completion(wire, signal);
      return req.stream === true
        ? localStream(r as unknown as Comlink.Remote<StreamHandle<CompletionChunk>>)
        : (r as Completion);
    };
    this.chat = { completions: { create: chatCreate as ChatCompletions['create'] } };
    this.completions = { create: textCreate as Completions['create'] };
    this.embeddings = {
      create: async (req): Promise<EmbeddingResponse> => {
        this.assertLoaded('embeddings.create');
        const remote = this.remote as unknown as Partial<Pick<WorkerEngineApi, 'embeddings'>>;
        if (!remote.embeddings) {
          throw new LlmError('feature-missing', 'embeddings.create: the engine host predates embeddings');
        }
        const { signal, ...wire } = req ?? ({} as typeof req);
        return remote.embeddings(wire, signal);
      },
    };
  }

  async rerank(req: RerankRequest): Promise<RerankResponse> {
    this.assertLoaded('rerank');
    const remote = this.remote as unknown as Partial<Pick<WorkerEngineApi, 'rerank'>>;
    if (!remote.rerank) throw new LlmError('feature-missing', 'rerank: the engine host predates reranking');
    const { signal, ...wire } = req ?? ({} as RerankRequest);
    return remote.rerank(wire, signal);
  }

  async tokenize(text: string, options?: TokenizeOptions): Promise<number[]> {
    this.assertLoaded('tokenize');
    return this.remote.tokenize(text, options);
  }

  async detokenize(ids: readonly number[], options?: { readonly renderSpecial?: boolean }): Promise<string> {
    this.assertLoaded('detokenize');
    if (!Array.isArray(ids))
      throw new LlmError('invalid-request', 'detokenize: ids must be an array of token ids', {
        details: { field: 'ids' },
      });
    return this.remote.detokenize([...ids], options);
  }

  async stats(): Promise<EngineStats> {
    this.assertLoaded('stats');
    return this.remote.stats();
  }

  async saveCache(): Promise<number> {
    this.assertLoaded('saveCache');
    const remote = this.remote as unknown as { saveCache(): Promise<number | undefined> };
    return (await remote.saveCache()) ?? 0;
  }

  /** After `unload()` the proxy is released: calls fail with a clear error instead of Comlink's TypeError. */
  private assertLoaded(step: string): void {
    if (this.unloading)
      throw new LlmError('invalid-request', `${step}: the engine was unloaded; create a new engine`, {
        details: { reason: 'unloaded' },
      });
  }

  /**
   * Unloads on the other side. Resolves when it answered, or after `unloadTimeoutMs` when it did not (a hung
   * template render or kernel): then the worker is given up (`onUnload(false)` — a dedicated worker is terminated).
   * Rejects only with the error the other side's unload threw.
   */
  unload(): Promise<void> {
    this.unloading ??= (async () => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const deadline = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), this.unloadTimeoutMs);
      });
      let answered = false;
      try {
        const outcome = await Promise.race([this.remote.unload().then(() => 'done' as const), deadline]);
        answered = outcome === 'done';
      } finally {
        clearTimeout(timer);
        try {
          this.remote[Comlink.releaseProxy]();
        } catch {
          // Already released or the port is closed: nothing left to release.
        }
        this.onUnload?.(answered);
      }
    })();
    return this.unloading;
  }
}
