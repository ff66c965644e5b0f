/**
 * The object a worker exposes through Comlink: an `Engine` flattened into plain async methods whose arguments
 * clone (the `AbortSignal` travels as its own argument so the "abort-signal" transfer handler sees it; progress
 * callbacks travel as Comlink proxies; streams come back as proxied async iterators). One engine per worker.
 */

import * as Comlink from 'comlink';
import type { Engine, EngineInfo, EngineOptions, EngineStats, LoadProgress, TokenizeOptions } from '../api/engine.js';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionRequest,
  Completion,
  CompletionChunk,
  CompletionRequest,
} from '../api/types.js';
import type { EmbeddingRequest, EmbeddingResponse, RerankRequest, RerankResponse } from '../api/embedding-types.js';
import { LlmError } from '../errors.js';
import './errors.js';

/** Engine options as they cross the boundary (no functions, no signal; a URL object becomes its string). */
export type WireEngineOptions = Omit<EngineOptions, 'onProgress' | 'signal' | 'model' | 'gpu' | 'mmproj'> & {
  readonly model: string | Blob | readonly Blob[];
  readonly mmproj?: string | Blob | readonly Blob[];
};

/** A request as it crosses the boundary (the signal goes separately). */
type Wire<T> = Omit<T, 'signal'>;

/** An async iterator living on the other side. */
export interface StreamHandle<T> {
  next(): Promise<IteratorResult<T>>;
  return(): Promise<IteratorResult<T>>;
}

/** The methods a worker exposes. */
export interface WorkerEngineApi {
  load(options: WireEngineOptions, onProgress?: (p: LoadProgress) => void, signal?: AbortSignal): Promise<EngineInfo>;
  chat(
    request: Wire<ChatCompletionRequest>,
    signal?: AbortSignal,
  ): Promise<ChatCompletion | (StreamHandle<ChatCompletionChunk> & Comlink.ProxyMarked)>;
  completion(
    request: Wire<CompletionRequest>,
    signal?: AbortSignal,
  ): Promise<Completion | (StreamHandle<CompletionChunk> & Comlink.ProxyMarked)>;
  /** Optional so hosts built before embeddings still type-check; absent → `feature-missing` on the page side. */
  embeddings?(request: Wire<EmbeddingRequest>, signal?: AbortSignal): Promise<EmbeddingResponse>;
  /** Optional as `embeddings`. */
  rerank?(request: Wire<RerankRequest>, signal?: AbortSignal): Promise<RerankResponse>;
  tokenize(text: string, options?: TokenizeOptions): Promise<number[]>;
  detokenize(ids: readonly number[], options?: { readonly renderSpecial?: boolean }): Promise<string>;
  stats(): Promise<EngineStats>;
  /** Optional so engines hosted by older hosts still type-check; absent → nothing saved. */
  saveCache?(): Promise<number>;
  unload(): Promise<void>;
}

/** Makes an engine (normally `createEngine`; tests pass one over fakes). */
export type EngineFactory = (options: EngineOptions) => Promise<Engine>;

function proxyStream<T>(iterable: AsyncIterable<T>): StreamHandle<T> & Comlink.ProxyMarked {
  const it = iterable[Symbol.asyncIterator]();
  return Comlink.proxy({
    next: () => it.next(),
    return: async (): Promise<IteratorResult<T>> => (it.return ? it.return() : { value: undefined, done: true }),
  });
}

/** The exposed object around an engine made by `factory`. */
export function createWorkerApi(factory: EngineFactory): WorkerEngineApi {
  let engine: Engine | null = null;
  let loading = false;
  const need = (step: string): Engine => {
    if (!engine) throw new LlmError('invalid-request', `${step}: no model is loaded in this worker; call load first`);
    return engine;
  };
  return {
    async load(options, onProgress, signal) {
      if (engine || loading)
        throw new LlmError(
          'invalid-request',
          'load: this worker already holds an engine; create another worker engine for another model',
        );
      loading = true;
      try {
        engine = await factory({ ...options, onProgress: onProgress ? (p) => void onProgress(p) : undefined, signal });
        return engine.info;
      } finally {
        loading = false;
        // The callback is a Comlink proxy of the page's function: release its port once loading is over.
        (onProgress as unknown as { [Comlink.releaseProxy]?: () => void } | undefined)?.[Comlink.releaseProxy]?.();
      }
    },
    async chat(request, signal) {
      const r = await need('chat.completions.create').chat.completions.create({ ...request, signal });
      return Symbol.asyncIterator in r ? proxyStream(r) : r;
    },
    async completion(request, signal) {
      const r = await need('completions.create').completions.create({ ...request, signal });
      return Symbol.asyncIterator in r ? proxyStream(r) : r;
    },
    embeddings: (request, signal) => need('embeddings.create').embeddings.create({ ...request, signal }),
    rerank: (request, signal) => need('rerank').rerank({ ...request, signal }),
    tokenize: (text, options) => need('tokenize').tokenize(text, options),
    detokenize: (ids, options) => need('detokenize').detokenize(ids, options),
    stats: () => need('stats').stats(),
    saveCache: () => need('saveCache').saveCache(),
    async unload() {
      await engine?.unload();
    },
  };
}
