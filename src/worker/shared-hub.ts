/**
 * The shared worker's side of `createSharedWorkerEngine`: one hub per shared worker, every tab (every engine handle)
 * connecting on its own `MessagePort`, each port exposing the same `WorkerEngineApi` as a dedicated worker plus
 * `hello`/`bye`/`sharing`.
 *
 * - Engines are shared by load key: the model (URL; a `File` by name, size and date; a bare `Blob` is never shared)
 *   and every engine option. A handle whose key matches a loaded engine attaches to it at once; one whose key matches
 *   a load in progress waits for that load and receives its progress (the latest event replayed first). A different
 *   model or different options load a separate engine beside the others — nobody else's engine or generation is
 *   touched — and an engine is unloaded when its last handle goes.
 * - Requests of every handle go through one `TabQueue` (round-robin between handles, one request at a time, as the
 *   engine itself runs one at a time). A streamed request keeps its turn until the engine has produced its last chunk
 *   (chunks are buffered here, so a slow reader does not hold the engine).
 * - A handle goes when its page calls `unload()`, sends `bye` (pagehide), or dies: a SharedWorker sees no port close,
 *   so the page holds a Web Lock named in `hello` for as long as the handle lives, and the hub queues for the same
 *   lock — granted exactly when the page releases it or is gone. A handle that goes takes only its own requests
 *   (running ones aborted, queued ones rejected) and, if it was the last, its engine.
 */

import * as Comlink from 'comlink';
import type { Engine, EngineInfo, LoadProgress } from '../api/engine.js';
import type { ChatCompletion, Completion } from '../api/types.js';
import type { EmbeddingResponse, RerankResponse } from '../api/embedding-types.js';
import { LlmError } from '../errors.js';
import './errors.js';
import { TabQueue } from './tab-queue.js';
import type { EngineFactory, StreamHandle, WireEngineOptions, WorkerEngineApi } from './worker-api.js';

/** What `sharing()` tells a handle about its engine. */
interface SharingInfo {
  /** True when this handle reused an engine loaded (or loading) for another handle. */
  readonly attached: boolean;
  /** Handles using this engine now, this one included. */
  readonly handles: number;
  /** Engines loaded or loading in the shared worker. */
  readonly engines: number;
}

/** The API of one port of the shared worker. */
export interface SharedEngineApi extends WorkerEngineApi {
  /** Names the Web Lock this handle's page holds while it lives (the hub watches it to see the page die). */
  hello(lockName: string | null): Promise<void>;
  /** The page is going away (pagehide): drop this handle now. */
  bye(): Promise<void>;
  sharing(): Promise<SharingInfo>;
}

/** Calls `onGone` once the page holding the lock `lockName` released it or died. */
export type HandleWatcher = (lockName: string, onGone: () => void) => void;

interface Entry {
  readonly key: string;
  engine: Engine | null;
  ready: Promise<Engine>;
  readonly controller: AbortController;
  readonly handles: Set<Handle>;
  /** Handles waiting for the load, with their progress callbacks. */
  readonly listeners: Map<Handle, (p: LoadProgress) => void>;
  last: LoadProgress | null;
}

interface Handle {
  readonly id: string;
  entry: Entry | null;
  attached: boolean;
  maxQueue: number;
  gone: boolean;
  /** Running and queued requests: aborting one stops its generation or takes it out of the queue. */
  readonly jobs: Set<AbortController>;
}

/** Watches Web Locks where the worker has them (browsers); elsewhere only `unload`/`bye` end a handle. */
const lockWatcher: HandleWatcher = (lockName, onGone) => {
  const locks = (globalThis.navigator as (Navigator & { locks?: LockManager }) | undefined)?.locks;
  if (!locks) return;
  void locks.request(lockName, async () => onGone()).catch(() => onGone());
};

/** The load key: equal keys share one engine. */
export function loadKeyOf(options: WireEngineOptions): string {
  const { model, ...rest } = options;
  let m: string;
  if (typeof model === 'string') m = `url:${model}`;
  else if (typeof File !== 'undefined' && model instanceof File)
    m = `file:${model.name}:${model.size}:${model.lastModified}:${model.type}`;
  else m = `blob:${crypto.randomUUID()}`; // a bare Blob has no identity before it is read: never shared
  const opts = Object.entries(rest as Record<string, unknown>)
    .filter(([k, v]) => v !== undefined && k !== 'maxQueue')
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return `${m}\n${JSON.stringify(opts)}`;
}

/** Ends a callback proxy's port (a no-op for plain functions). */
function releaseCallback(f: unknown): void {
  try {
    (f as { [Comlink.releaseProxy]?: () => void } | undefined)?.[Comlink.releaseProxy]?.();
  } catch {
    // The page is gone: its port is already closed.
  }
}

/** Closes a port once the answers already on their way (rejections of the handle's requests) have been posted. */
function closeSoon(port: MessagePort): void {
  setTimeout(() => port.close(), 100);
}

/** Chunks buffered between the engine's stream and the page's reads. */
class ChunkRelay<T> {
  private readonly items: T[] = [];
  private done = false;
  private error: unknown = null;
  private wake: (() => void) | null = null;

  push(item: T): void {
    this.items.push(item);
    this.wake?.();
  }

  end(error?: unknown): void {
    this.done = true;
    if (error !== undefined) this.error = error;
    this.wake?.();
  }

  async next(): Promise<IteratorResult<T>> {
    for (;;) {
      if (this.items.length > 0) return { value: this.items.shift() as T, done: false };
      if (this.error !== null) throw this.error;
      if (this.done) return { value: undefined, done: true };
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = null;
    }
  }
}

/** The hub of one shared worker. */
export class SharedEngineHub {
  private readonly entries = new Map<string, Entry>();
  private readonly queue = new TabQueue();
  private nextId = 1;

  constructor(
    private readonly factory: EngineFactory,
    private readonly watch: HandleWatcher = lockWatcher,
  ) {}

  /** Engines loaded or loading. */
  get engines(): number {
    return this.entries.size;
  }

  /** Serves a new handle on `port` (the shared worker's `connect` event). */
  connect(port: MessagePort): void {
    const handle: Handle = {
      id: `h${this.nextId++}`,
      entry: null,
      attached: false,
      maxQueue: 16,
      gone: false,
      jobs: new Set(),
    };
    const api = this.apiFor(handle, port);
    // A page that releases its proxy without unloading (garbage collection, a bug) still ends its handle.
    Comlink.expose(
      Object.assign(api, { [Comlink.finalizer]: () => void this.drop(handle, 'the engine was released by its page') }),
      port,
    );
  }

  private apiFor(h: Handle, port: MessagePort): SharedEngineApi {
    const need = (step: string): Engine => {
      const engine = h.entry?.engine;
      if (!engine || h.gone)
        throw new LlmError('invalid-request', `${step}: no model is loaded for this engine; create it again`, {
          details: { reason: 'unloaded' },
        });
      return engine;
    };
    return {
      hello: async (lockName) => {
        if (lockName)
          this.watch(
            lockName,
            () => void this.drop(h, 'the page that held this engine is gone').finally(() => closeSoon(port)),
          );
      },
      bye: async () => {
        await this.drop(h, 'the page that held this engine went away');
        closeSoon(port);
      },
      sharing: async () => ({ attached: h.attached, handles: h.entry?.handles.size ?? 0, engines: this.entries.size }),
      load: (options, onProgress, signal) => this.load(h, options, onProgress, signal),
      chat: (request, signal) =>
        this.request(h, signal, (s) =>
          need('chat.completions.create').chat.completions.create({ ...request, signal: s }),
        ),
      completion: (request, signal) =>
        this.request(h, signal, (s) => need('completions.create').completions.create({ ...request, signal: s })),
      embeddings: (request, signal) =>
        this.request(h, signal, (s) =>
          need('embeddings.create').embeddings.create({ ...request, signal: s }),
        ) as Promise<EmbeddingResponse>,
      rerank: (request, signal) =>
        this.request(h, signal, (s) => need('rerank').rerank({ ...request, signal: s })) as Promise<RerankResponse>,
      tokenize: async (text, options) => need('tokenize').tokenize(text, options),
      detokenize: async (ids, options) => need('detokenize').detokenize(ids, options),
      stats: async () => need('stats').stats(),
      saveCache: async () => need('saveCache').saveCache(),
      unload: () =>
        this.drop(
          h,
          'the engine was unloaded while this request was running or queued; create a new engine to continue',
        ),
    };
  }

  private async load(
    h: Handle,
    options: WireEngineOptions,
    onProgress: ((p: LoadProgress) => void) | undefined,
    signal: AbortSignal | undefined,
  ): Promise<EngineInfo> {
    try {
      if (h.gone) throw new LlmError('invalid-request', 'load: this engine handle was unloaded; create a new engine');
      if (h.entry)
        throw new LlmError(
          'invalid-request',
          'load: this engine handle already holds a model; create another engine for another model',
        );
      if (signal?.aborted) throw new LlmError('aborted', 'loading was aborted', { cause: signal.reason });
      h.maxQueue =
        typeof options.maxQueue === 'number' && Number.isInteger(options.maxQueue) && options.maxQueue >= 0
          ? options.maxQueue
          : 16;
      const key = loadKeyOf(options);
      let entry = this.entries.get(key);
      h.attached = entry !== undefined;
      entry ??= this.startLoad(key, options);
      entry.handles.add(h);
      h.entry = entry;
      if (entry.engine) {
        onProgress?.({ phase: 'ready', loadedBytes: 0, totalBytes: 0 });
        return entry.engine.info;
      }
      const progress = (p: LoadProgress): void => {
        try {
          void Promise.resolve(onProgress?.(p)).catch(() => {});
        } catch {
          // A broken callback must not break loading for the other handles.
        }
      };
      entry.listeners.set(h, progress);
      if (entry.last) progress(entry.last);
      const aborted = new Promise<never>((_, reject) => {
        signal?.addEventListener(
          'abort',
          () => reject(new LlmError('aborted', 'loading was aborted', { cause: signal.reason })),
          { once: true },
        );
      });
      try {
        const engine = await Promise.race([entry.ready, aborted]);
        return engine.info;
      } catch (e) {
        await this.drop(h, 'loading was aborted');
        throw e;
      } finally {
        entry.listeners.delete(h);
      }
    } finally {
      releaseCallback(onProgress);
    }
  }

  private startLoad(key: string, options: WireEngineOptions): Entry {
    const controller = new AbortController();
    const entry: Entry = {
      key,
      engine: null,
      ready: Promise.resolve(null as unknown as Engine),
      controller,
      handles: new Set(),
      listeners: new Map(),
      last: null,
    };
    entry.ready = this.factory({
      ...options,
      signal: controller.signal,
      onProgress: (p) => {
        entry.last = p;
        for (const f of entry.listeners.values()) f(p);
      },
    });
    this.entries.set(key, entry);
    entry.ready.then(
      (engine) => {
        entry.engine = engine;
        // Every handle gave up while it loaded: nobody will use it.
        if (entry.handles.size === 0) this.retire(entry).catch(() => {});
      },
      () => {
        if (this.entries.get(key) === entry) this.entries.delete(key);
      },
    );
    return entry;
  }

  /** Runs one request of `h` in its turn; a stream keeps the turn until the engine produced its last chunk. */
  private async request<R extends ChatCompletion | Completion | EmbeddingResponse | RerankResponse, C>(
    h: Handle,
    signal: AbortSignal | undefined,
    start: (signal: AbortSignal) => Promise<R | AsyncIterable<C>>,
  ): Promise<R | (StreamHandle<C> & Comlink.ProxyMarked)> {
    const job = new AbortController();
    const onAbort = (): void => job.abort(signal?.reason ?? new LlmError('aborted', 'request was aborted'));
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    h.jobs.add(job);
    let release: (() => void) | null = null;
    let streaming = false;
    const finish = (): void => {
      release?.();
      h.jobs.delete(job);
      signal?.removeEventListener('abort', onAbort);
    };
    try {
      if (h.gone || !h.entry?.engine)
        throw new LlmError('invalid-request', 'request: no model is loaded for this engine; create it again', {
          details: { reason: 'unloaded' },
        });
      release = await this.queue.acquire(h.id, job.signal, h.maxQueue);
      const r = await start(job.signal);
      if (!(Symbol.asyncIterator in r)) return r;
      streaming = true;
      const relay = new ChunkRelay<C>();
      void (async () => {
        try {
          for await (const chunk of r) relay.push(chunk);
          relay.end();
        } catch (e) {
          relay.end(e);
        } finally {
          finish();
        }
      })();
      return Comlink.proxy({
        next: () => relay.next(),
        return: async (): Promise<IteratorResult<C>> => {
          job.abort(new LlmError('aborted', 'the stream was closed by its reader'));
          return { value: undefined, done: true };
        },
      });
    } finally {
      if (!streaming) finish();
    }
  }

  /** Ends handle `h`: aborts its requests, and unloads its engine if no other handle uses it. Idempotent. */
  private async drop(h: Handle, why: string): Promise<void> {
    if (h.gone) return;
    h.gone = true;
    const error = new LlmError('aborted', why, { details: { reason: 'unloaded' } });
    for (const job of h.jobs) job.abort(error);
    this.queue.removeTab(h.id, error);
    const entry = h.entry;
    if (!entry) return;
    entry.handles.delete(h);
    entry.listeners.delete(h);
    if (entry.handles.size === 0) await this.retire(entry);
  }

  /** Unloads an engine no handle uses (or stops its load). */
  private async retire(entry: Entry): Promise<void> {
    if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
    if (entry.engine) await entry.engine.unload();
    else entry.controller.abort(new LlmError('aborted', 'every page waiting for this model gave up loading it'));
  }
}
