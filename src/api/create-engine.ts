/**
 * `createEngine`: loads a GGUF model (URL, File/Blob or path) onto the chosen backend and returns a ready `Engine`.
 * Steps: open the bytes (IndexedDB-cached download for URLs) → parse the header → tokenizer and chat template →
 * pick the backend → check the memory plan → stream the weights up → warmup. For a URL not yet cached, the header is
 * read alone (range requests) and the plan checked before the download starts. With `backend: 'auto'`, a WebGPU
 * backend whose plan does not fit, or that fails to load or warm up, is replaced by WASM and the reason is reported
 * in `engine.info.backend`.
 */

import { createBackend, selectBackend, wasmFallback, type BackendSelection } from '../backend/select-backend.js';
import { KV_TYPES } from '../backend/kv-type.js';
import { LlmError, isLlmError, throwIfAborted } from '../errors.js';
import { parseGguf } from '../gguf/parse.js';
import type { GgufFile } from '../gguf/types.js';
import type { ByteSource } from '../io/byte-source.js';
import { modelFactsOf } from './model-facts.js';
import { modelIdentityOf } from './model-identity.js';
import { LOAD_READ_AHEAD } from '../io/idb-byte-source.js';
import { openModelSource } from '../io/index.js';
import { getArchitecture, loadArchitecture } from '../model/arch/index.js';
import type { ModelConfig } from '../model/config.js';
import { loadAnyModel } from '../model/load-any.js';
import { readModelConfig } from '../model/load.js';
import { defaultContextLength, DEFAULT_UBATCH_SIZE, type RunShape } from '../model/run-shape.js';
import { loadTokenizer, type Tokenizer, type VocabTokenizer } from '../tokenizer/index.js';
import { nowMs } from '../engine/context.js';
import { createChatFormatter, type ChatFormatter } from './chat-formatter.js';
import { defaultKvType } from './default-kv-type.js';
import { BACKEND_CHOICES, type Engine, type EngineOptions } from './engine.js';
import { createEngineFromParts } from './local-engine.js';
import { checkMemoryPlan, readHeaderBeforeDownload } from './memory-preflight.js';

/** Default number of KV sequences of an engine. */
const DEFAULT_SLOTS = 2;
/** Longest KV size an engine accepts. */
const MAX_CONTEXT_LENGTH = 1 << 20;

/** A validated `createEngine` call: its options, backend choice, batch size, progress sink and start time. */
interface LoadRun {
  readonly options: EngineOptions;
  readonly choice: NonNullable<EngineOptions['backend']>;
  readonly batchSize: number;
  readonly signal: AbortSignal | undefined;
  readonly report: NonNullable<EngineOptions['onProgress']>;
  readonly t0: number;
}

/** A parsed model ready to upload: its header, config, run shape, tokenizer and chat formatter. */
interface ParsedModel {
  readonly gguf: GgufFile;
  readonly shape: RunShape;
  readonly tokenizer: Tokenizer & Pick<VocabTokenizer, 'buildIndexesWhenIdle'>;
  readonly chat: ChatFormatter;
  readonly source: ByteSource;
}

function positiveInt(name: string, v: number | undefined): void {
  if (v !== undefined && !(Number.isSafeInteger(v) && v > 0)) {
    throw new LlmError(
      'invalid-request',
      `createEngine: option '${name}' must be a positive integer, got ${String(v)}`,
      { details: { field: name } },
    );
  }
}

export { modelIdentityOf };

/**
 * Loads `options.model` and returns an engine running in this thread: plan (options, header, backend, memory) →
 * load (download, parse, upload, warmup) → fall back (under 'auto', to WASM when WebGPU cannot hold or run it).
 * Every failure releases what was acquired in one place: the backend where it was made, the source here.
 */
export async function createEngine(options: EngineOptions): Promise<Engine> {
  const run = planRun(options);
  // A URL that opening would download: plan from the header alone first, so a model that cannot fit is not fetched.
  const header = await readHeaderBeforeDownload(options.model, run.signal);
  let planned: BackendSelection | null = header ? await selectAndPlan(run, header) : null;
  let source: ByteSource | null = null;
  try {
    // A stored copy is checked chunk by chunk as the load reads it (one pass over the bytes, not a second one at
    // open): a chunk that fails its recorded sha256 ends the load with the integrity error before anything is served.
    source = await openModelSource(options.model, {
      signal: run.signal,
      verify: 'read',
      readAhead: LOAD_READ_AHEAD, // IndexedDB keeps reading while the header is parsed and the tokenizer built
      ...(options.sha256 !== undefined ? { sha256: options.sha256 } : {}),
      onProgress: (p) => run.report({ phase: 'download', loadedBytes: p.loadedBytes, totalBytes: p.totalBytes }),
    });
    const model = await parseModel(run, source);
    // A backend chosen and planned from the header before the download is reused as is.
    const selection = planned ?? (await selectAndPlan(run, model.gguf));
    planned = null; // owned by loadWithFallback from here
    const engine = await loadWithFallback(run, model, selection);
    // The tokenizer's text → id maps are built in the idle time after the load, not during it (the first tokenize
    // call completes whatever is left).
    model.tokenizer.buildIndexesWhenIdle();
    run.report({ phase: 'ready', loadedBytes: source.size, totalBytes: source.size });
    return engine;
  } catch (e) {
    planned?.ops.destroy();
    await source?.close?.();
    throw e;
  }
}

/** Validates the options (no I/O yet) and fixes the progress sink and the start time. */
function planRun(options: EngineOptions): LoadRun {
  if (options === null || typeof options !== 'object' || options.model === undefined || options.model === null) {
    throw new LlmError('invalid-request', "createEngine: option 'model' is required (a URL, a File/Blob or a path)", {
      details: { field: 'model' },
    });
  }
  const choice = options.backend ?? 'auto';
  if (!BACKEND_CHOICES.includes(choice)) {
    throw new LlmError(
      'invalid-request',
      `createEngine: option 'backend' is '${String(choice)}'; use 'auto', 'webgpu', 'wasm' or 'cpu'`,
      { details: { field: 'backend' } },
    );
  }
  for (const k of ['contextLength', 'slots', 'batchSize', 'ubatchSize', 'cacheTokenBudget', 'threads'] as const)
    positiveInt(k, options[k]);
  if (options.kvType !== undefined && !KV_TYPES.includes(options.kvType)) {
    throw new LlmError(
      'invalid-request',
      `createEngine: option 'kvType' is '${String(options.kvType)}'; use ${KV_TYPES.map((t) => `'${t}'`).join(', ')}`,
      { details: { field: 'kvType' } },
    );
  }
  if (
    options.gpuMemoryBudget !== undefined &&
    !(Number.isFinite(options.gpuMemoryBudget) && options.gpuMemoryBudget > 0)
  ) {
    throw new LlmError(
      'invalid-request',
      `createEngine: option 'gpuMemoryBudget' must be a positive number of bytes, got ${String(options.gpuMemoryBudget)}`,
      {
        details: { field: 'gpuMemoryBudget' },
      },
    );
  }
  const { onProgress } = options;
  const report: LoadRun['report'] = (p) => {
    try {
      onProgress?.(p);
    } catch {
      // A broken progress callback must not break loading.
    }
  };
  return {
    options,
    choice,
    batchSize: options.batchSize ?? DEFAULT_UBATCH_SIZE,
    signal: options.signal,
    report,
    t0: nowMs(),
  };
}

/** The model's config and the run shape the options ask for (defaults from `model/run-shape.ts`). */
function shapeOf(run: LoadRun, gguf: GgufFile): { config: ModelConfig; shape: RunShape } {
  const config = readModelConfig(gguf);
  const contextLength = Math.min(run.options.contextLength ?? defaultContextLength(config), MAX_CONTEXT_LENGTH);
  // An encoder packs several inputs into one step (model/encoder.ts), so its step is not capped by the context
  // (llama.cpp caps n_batch by n_ctx only for causal models).
  const stepCap = getArchitecture(config.arch).encoder ? Number.POSITIVE_INFINITY : contextLength;
  const ubatchSize = Math.min(run.options.ubatchSize ?? run.batchSize, run.batchSize, stepCap);
  const nSlots = run.options.slots ?? DEFAULT_SLOTS;
  const { kvType } = run.options;
  return { config, shape: { contextLength, ubatchSize, nSlots, ...(kvType ? { kvType } : {}) } };
}

/** Selects the backend and checks its memory plan; under 'auto' a WebGPU plan that cannot fit falls back to WASM. */
async function selectAndPlan(run: LoadRun, gguf: GgufFile): Promise<BackendSelection> {
  const { config, shape } = shapeOf(run, gguf);
  const { threads, gpu, gpuMemoryBudget } = run.options;
  const chosen = await selectBackend(run.choice, { threads, gpu, signal: run.signal });
  try {
    await checkMemoryPlan(chosen, gguf, config, shape, gpuMemoryBudget);
    return chosen;
  } catch (e) {
    chosen.ops.destroy();
    if (run.choice !== 'auto' || chosen.name !== 'webgpu' || isLlmError(e, 'aborted')) throw e;
    return wasmFallback(`auto: the WebGPU memory plan does not fit (${e instanceof Error ? e.message : String(e)})`, {
      threads,
      signal: run.signal,
    });
  }
}

/** Parses the header, then the config (a broken hyper-parameter is reported as such), tokenizer and chat template. */
async function parseModel(run: LoadRun, source: ByteSource): Promise<ParsedModel> {
  run.report({ phase: 'parse', loadedBytes: 0, totalBytes: source.size });
  const gguf = await parseGguf(source, { signal: run.signal });
  throwIfAborted(run.signal, 'loading the model');
  await loadArchitecture(gguf.metadata['general.architecture']); // encoder entries are a chunk of their own
  const { shape } = shapeOf(run, gguf);
  const tokenizer = await loadTokenizer(gguf.metadata);
  const chat = createChatFormatter(tokenizer, {
    template: run.options.chatTemplate,
    metadata: gguf.metadata,
    fallback: run.options.templateFallback,
    budget: run.options.templateBudget,
  });
  return { gguf, shape, tokenizer, chat, source };
}

/** Loads on `selection`; under 'auto', a WebGPU backend that fails to load or warm up is replaced by WASM once. */
async function loadWithFallback(run: LoadRun, model: ParsedModel, selection: BackendSelection): Promise<Engine> {
  try {
    return await loadOn(run, model, selection);
  } catch (e) {
    if (run.choice !== 'auto' || selection.name !== 'webgpu' || isLlmError(e, 'aborted') || run.signal?.aborted)
      throw e;
    const reason = `auto: WebGPU failed to load or warm up (${e instanceof Error ? e.message : String(e)})`;
    return loadOn(run, model, await wasmFallback(reason, { threads: run.options.threads, signal: run.signal }));
  }
}

/** Uploads the weights to `selection` and builds the engine (with warmup); releases the backend when that fails. */
async function loadOn(run: LoadRun, model: ParsedModel, selection: BackendSelection): Promise<Engine> {
  const { options, signal } = run;
  const { contextLength, ubatchSize, nSlots } = model.shape;
  const kvType = model.shape.kvType ?? defaultKvType(selection.name, model.gguf);
  let vision: import('../vision/vision-encoder.js').VisionEncoder | null = null;
  try {
    const transformer = await loadAnyModel(model.gguf, model.source, selection.ops, {
      contextLength,
      ubatchSize,
      nSlots,
      kvType,
      signal,
      onProgress: (p) => run.report({ phase: 'upload', loadedBytes: p.loadedBytes, totalBytes: p.totalBytes }),
    });
    // The vision encoder is a chunk of its own, fetched only when an mmproj is given.
    // It runs on a backend of its own, of the model's kind.
    const encoderOps = () => createBackend(selection.name, { threads: options.threads, gpu: options.gpu, signal });
    vision =
      options.mmproj !== undefined
        ? await (await import('./open-vision.js')).openVision(options.mmproj, transformer, signal, encoderOps)
        : null;
    const loadMs = nowMs() - run.t0;
    if (options.warmup !== false) run.report({ phase: 'warmup', loadedBytes: 0, totalBytes: 0 });
    return await createEngineFromParts(
      {
        transformer,
        tokenizer: model.tokenizer,
        chat: model.chat,
        ...rerankTemplateOf(model.gguf),
        modelIdentity: modelIdentityOf(model.source),
        modelFacts: modelFactsOf(model.gguf),
        backend: { name: selection.name, description: selection.ops.description, reason: selection.reason },
        contextLength,
        slots: nSlots,
        maxQueue: options.maxQueue,
        batchSize: run.batchSize,
        cacheTokenBudget: options.cacheTokenBudget,
        loadMs,
        warmup: options.warmup,
        onUnload: () => {
          vision?.destroy();
          return model.source.close?.();
        },
        // Browsers persist by default (IndexedDB); Node only when asked for (a folder or process memory).
        persistedCache:
          options.persistedCache ?? (typeof indexedDB !== 'undefined' && typeof window !== 'undefined' ? {} : false),
        ...(options.contextShift !== undefined ? { contextShift: options.contextShift } : {}),
        ...(vision ? { vision } : {}),
      },
      signal,
    );
  } catch (e) {
    vision?.destroy();
    selection.ops.destroy(); // also releases the transformer's buffers: they live on this backend
    throw e;
  }
}

/**
 * Reads a model's GGUF header only (for tools that need metadata without loading weights), then closes the source.
 * `options.cache: false` reads a URL live instead of through the IndexedDB model store.
 */
export async function readModelHeader(
  model: EngineOptions['model'],
  signal?: AbortSignal,
  options: { cache?: boolean } = {},
): Promise<GgufFile> {
  const source = await openModelSource(model, { signal, ...options });
  try {
    return await parseGguf(source, { signal });
  } finally {
    await source.close?.();
  }
}

/** `tokenizer.chat_template.rerank` as an `EngineParts` field, when the file has a string there. */
function rerankTemplateOf(gguf: GgufFile): { rerankTemplate?: string } {
  const t = gguf.metadata['tokenizer.chat_template.rerank'];
  return typeof t === 'string' ? { rerankTemplate: t } : {};
}
