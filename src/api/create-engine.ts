/**
 * `createEngine`: loads a GGUF model (URL, File/Blob or path) onto the chosen backend and returns a ready `Engine`.
 * Steps: open the bytes (IndexedDB-cached download for URLs) → parse the header → tokenizer and chat template →
 * pick the backend → check the memory plan → stream the weights up → warmup. For a URL not yet cached, the header is
 * read alone (range requests) and the plan checked before the download starts. With `backend: 'auto'`, a WebGPU
 * backend whose plan does not fit, or that fails to load or warm up, is replaced by WASM and the reason is reported
 * in `engine.info.backend`.
 */

import { selectBackend, wasmFallback, type BackendSelection } from '../backend/select-backend.js';
import { LlmError, isLlmError, throwIfAborted } from '../errors.js';
import { parseGguf } from '../gguf/parse.js';
import type { GgufFile } from '../gguf/types.js';
import type { ByteSource } from '../io/byte-source.js';
import { modelIdentityOf } from './model-identity.js';
import { openModelSource } from '../io/index.js';
import { loadTransformer, readModelConfig } from '../model/load.js';
import { createTokenizer } from '../tokenizer/index.js';
import { nowMs } from '../engine/context.js';
import { createChatFormatter } from './chat-formatter.js';
import { BACKEND_CHOICES, type Engine, type EngineOptions } from './engine.js';
import { createEngineFromParts } from './local-engine.js';
import { checkMemoryPlan, readHeaderBeforeDownload, type RunShape } from './memory-preflight.js';

/** Default KV cells per sequence when the caller gives none (capped by the model's training context). */
export const DEFAULT_CONTEXT_LENGTH = 4096;
/** Default number of KV sequences. */
export const DEFAULT_SLOTS = 2;
/** Default logical and physical batch. */
export const DEFAULT_BATCH_SIZE = 512;

function positiveInt(name: string, v: number | undefined): void {
  if (v !== undefined && !(Number.isSafeInteger(v) && v > 0)) {
    throw new LlmError('invalid-request', `createEngine: option '${name}' must be a positive integer, got ${String(v)}`, { details: { field: name } });
  }
}

export { modelIdentityOf };


/** Loads `options.model` and returns an engine running in this thread. */
export async function createEngine(options: EngineOptions): Promise<Engine> {
  if (options === null || typeof options !== 'object' || options.model === undefined || options.model === null) {
    throw new LlmError('invalid-request', "createEngine: option 'model' is required (a URL, a File/Blob or a path)", { details: { field: 'model' } });
  }
  const choice = options.backend ?? 'auto';
  if (!BACKEND_CHOICES.includes(choice)) {
    throw new LlmError('invalid-request', `createEngine: option 'backend' is '${String(choice)}'; use 'auto', 'webgpu', 'wasm' or 'cpu'`, { details: { field: 'backend' } });
  }
  for (const k of ['contextLength', 'slots', 'batchSize', 'ubatchSize', 'cacheTokenBudget', 'threads'] as const) positiveInt(k, options[k]);
  const { signal, onProgress } = options;
  const report: NonNullable<EngineOptions['onProgress']> = (p) => {
    try {
      onProgress?.(p);
    } catch {
      // A broken progress callback must not break loading.
    }
  };
  if (options.gpuMemoryBudget !== undefined && !(Number.isFinite(options.gpuMemoryBudget) && options.gpuMemoryBudget > 0)) {
    throw new LlmError('invalid-request', `createEngine: option 'gpuMemoryBudget' must be a positive number of bytes, got ${String(options.gpuMemoryBudget)}`, {
      details: { field: 'gpuMemoryBudget' },
    });
  }
  const t0 = nowMs();
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const shapeOf = (gguf: GgufFile): { config: ReturnType<typeof readModelConfig>; shape: RunShape } => {
    const config = readModelConfig(gguf);
    const contextLength = Math.min(options.contextLength ?? Math.min(config.contextLength || DEFAULT_CONTEXT_LENGTH, DEFAULT_CONTEXT_LENGTH), 1 << 20);
    const ubatchSize = Math.min(options.ubatchSize ?? batchSize, batchSize, contextLength);
    return { config, shape: { contextLength, slots: options.slots ?? DEFAULT_SLOTS, ubatchSize } };
  };
  // Selects the backend and checks its memory plan; under 'auto' a WebGPU plan that cannot fit falls back to WASM.
  const selectAndPlan = async (gguf: GgufFile): Promise<BackendSelection> => {
    const { config, shape } = shapeOf(gguf);
    const chosen = await selectBackend(choice, { threads: options.threads, gpu: options.gpu, signal });
    try {
      await checkMemoryPlan(chosen, gguf, config, shape, options.gpuMemoryBudget);
      return chosen;
    } catch (e) {
      chosen.ops.destroy();
      if (choice !== 'auto' || chosen.name !== 'webgpu' || isLlmError(e, 'aborted')) throw e;
      return wasmFallback(`auto: the WebGPU memory plan does not fit (${e instanceof Error ? e.message : String(e)})`, { threads: options.threads, signal });
    }
  };

  // A URL that opening would download: plan from the header alone first, so a model that cannot fit is not fetched.
  const header = await readHeaderBeforeDownload(options.model, signal);
  let planned: BackendSelection | null = header ? await selectAndPlan(header) : null;
  let source: ByteSource;
  try {
    source = await openModelSource(options.model, {
      signal,
      ...(options.sha256 !== undefined ? { sha256: options.sha256 } : {}),
      onProgress: (p) => report({ phase: 'download', loadedBytes: p.loadedBytes, totalBytes: p.totalBytes }),
    });
  } catch (e) {
    planned?.ops.destroy();
    throw e;
  }
  try {
    report({ phase: 'parse', loadedBytes: 0, totalBytes: source.size });
    const gguf = await parseGguf(source, { signal });
    throwIfAborted(signal, 'loading the model');
    // The model config first: a broken architecture or hyper-parameter is reported as such, not as a tokenizer error.
    const { shape } = shapeOf(gguf);
    const tokenizer = createTokenizer(gguf.metadata);
    const chat = createChatFormatter(tokenizer, {
      template: options.chatTemplate,
      metadata: gguf.metadata,
      fallback: options.templateFallback,
      budget: options.templateBudget,
    });
    const { contextLength, slots, ubatchSize } = shape;
    const identity = modelIdentityOf(source);

    const build = async (selection: BackendSelection): Promise<Engine> => {
      const transformer = await loadTransformer(gguf, source, selection.ops, {
        contextLength,
        ubatchSize,
        nSlots: slots,
        signal,
        onProgress: (p) => report({ phase: 'upload', loadedBytes: p.loadedBytes, totalBytes: p.totalBytes }),
      });
      const loadMs = nowMs() - t0;
      if (options.warmup !== false) report({ phase: 'warmup', loadedBytes: 0, totalBytes: 0 });
      try {
        return await createEngineFromParts(
          {
            transformer,
            tokenizer,
            chat,
            modelIdentity: identity,
            backend: { name: selection.name, description: selection.ops.description, reason: selection.reason },
            contextLength,
            slots,
            maxQueue: options.maxQueue,
            batchSize,
            cacheTokenBudget: options.cacheTokenBudget,
            loadMs,
            warmup: options.warmup,
            onUnload: () => source.close?.(),
            // Browsers persist by default (IndexedDB); Node only when asked for (a folder or process memory).
            persistedCache: options.persistedCache ?? (typeof indexedDB !== 'undefined' && typeof window !== 'undefined' ? {} : false),
          },
          signal,
        );
      } catch (e) {
        transformer.destroy();
        throw e;
      }
    };

    // A backend chosen and planned from the header before the download is reused as is.
    let selection = planned ?? (await selectAndPlan(gguf));
    planned = null;
    let engine: Engine;
    try {
      engine = await build(selection);
    } catch (e) {
      if (choice !== 'auto' || selection.name !== 'webgpu' || isLlmError(e, 'aborted') || signal?.aborted) {
        selection.ops.destroy();
        throw e;
      }
      selection.ops.destroy();
      selection = await wasmFallback(`auto: WebGPU failed to load or warm up (${e instanceof Error ? e.message : String(e)})`, { threads: options.threads, signal });
      try {
        engine = await build(selection);
      } catch (e2) {
        selection.ops.destroy();
        throw e2;
      }
    }
    report({ phase: 'ready', loadedBytes: source.size, totalBytes: source.size });
    return engine;
  } catch (e) {
    planned?.ops.destroy();
    await source.close?.();
    throw e;
  }
}

/**
 * Reads a model's GGUF header only (for tools that need metadata without loading weights), then closes the source.
 * `options.cache: false` reads a URL live instead of through the IndexedDB model store.
 */
export async function readModelHeader(model: EngineOptions['model'], signal?: AbortSignal, options: { cache?: boolean } = {}): Promise<GgufFile> {
  const source = await openModelSource(model, { signal, ...options });
  try {
    return await parseGguf(source, { signal });
  } finally {
    await source.close?.();
  }
}
