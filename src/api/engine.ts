/**
 * The `Engine` interface: one shape for the in-thread engine (`createEngine`) and the worker engine
 * (`createWorkerEngine`), as web-llm's `MLCEngineInterface`. Every method is async so the worker proxy can
 * implement it exactly; streams are async iterables.
 */

import type { KvType } from '../backend/kv-type.js';
import type { PersistedPromptCacheOptions } from '../engine/persisted-cache.js';
import type { TemplateBudget } from '../chat/template-budget.js';
import type { PromptCacheStats } from '../engine/prompt-cache.js';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionRequest,
  Completion,
  CompletionChunk,
  CompletionRequest,
} from './types.js';
import type { Embeddings, RerankRequest, RerankResponse } from './embedding-types.js';

/** Which backend to run on. 'auto': WebGPU when an adapter works and passes warmup, else WASM. */
export type BackendChoice = 'auto' | 'webgpu' | 'wasm' | 'cpu';

/** Every `BackendChoice`, 'auto' (the default) first: for validating options and command-line flags. */
export const BACKEND_CHOICES: readonly BackendChoice[] = ['auto', 'webgpu', 'wasm', 'cpu'];

/** A model file: URL (string or `URL`), `File`/`Blob`, or a filesystem path (Node). */
export type ModelInput = string | URL | Blob | readonly Blob[];

/** Loading progress. */
export interface LoadProgress {
  /** 'download' / 'parse' / 'upload' (weights to the backend) / 'warmup' / 'ready'. */
  readonly phase: 'download' | 'parse' | 'upload' | 'warmup' | 'ready';
  /** Bytes done in this phase (download, upload). */
  readonly loadedBytes: number;
  /** Bytes of this phase in all, 0 when unknown. */
  readonly totalBytes: number;
}

/** Options of `createEngine` / `createWorkerEngine`. */
export interface EngineOptions {
  readonly model: ModelInput;
  /**
   * The model's vision projector (llama.cpp's `mmproj` GGUF: `clip.projector_type` gemma3), as a URL, File/Blob or
   * path: chat messages may then hold `image_url` content parts. Its width must be the model's `n_embd`.
   */
  readonly mmproj?: ModelInput;
  /**
   * Expected sha256 (64 hex digits) of a model given by URL: the download is checked against it, and it lets an
   * interrupted download resume from a server without a strong ETag (see `downloadModel`'s `sha256`).
   */
  readonly sha256?: string;
  /** Default 'auto'. */
  readonly backend?: BackendChoice;
  /** KV cells per sequence. Default: min(model's training context, 4096). */
  readonly contextLength?: number;
  /** Independent KV sequences kept for the prompt cache (conversations). Default 2. */
  readonly slots?: number;
  /**
   * KV cache element type, llama.cpp's `-ctk`/`-ctv` for both K and V: 'f32', 'f16', or 'q8_0' / 'q4_0' (rows
   * quantized in blocks of 32 along the head dimension; about 0.53× / 0.28× the bytes of f16, at some accuracy cost).
   * Default: f16 on wasm for decoder models (llama.cpp's default; f32 for encoders and pooled decoders), else the backend's own (f32 on
   * cpu; f16 on WebGPU where shader-f16 is available, else f32). WebGPU
   * stores only its own type; another fails loading with `LlmError('unsupported-type')` (under backend 'auto',
   * loading falls back to WASM).
   */
  readonly kvType?: KvType;
  /**
   * When a generation fills the context, keep going as llama.cpp's context shift does: keep the first position (BOS),
   * drop the oldest half of the rest and re-rotate the kept keys in place (no re-prefill); the output then no longer
   * sees the dropped tokens. Default: on for chat completions, off for completions (they end with 'length').
   * Without `max_tokens`, a shifted generation stops after `contextLength` generated tokens.
   */
  readonly contextShift?: boolean;
  /** Logical batch: most prompt tokens submitted per decode call. Default 512. */
  readonly batchSize?: number;
  /** Physical batch: most tokens per forward step (chunked prefill). Default min(batchSize, 512). */
  readonly ubatchSize?: number;
  /** Most prompt tokens kept in unused slots (default: every cell). */
  readonly cacheTokenBudget?: number;
  /** Requests that may wait behind the running one; more fail with `invalid-request`. Default 16. */
  readonly maxQueue?: number;
  /** Run llama.cpp's warmup decode at load (default true). */
  readonly warmup?: boolean;
  /** A Jinja chat template overriding `tokenizer.chat_template`. */
  readonly chatTemplate?: string;
  /**
   * A chat template that does not compile fails loading with `LlmError('template')` (default), or with 'chatml'
   * the engine renders ChatML instead (`info().chatTemplateFallback` says why).
   */
  readonly templateFallback?: 'error' | 'chatml';
  /** Limits of each chat-template render (range sizes, loop iterations, output, wall time). */
  readonly templateBudget?: TemplateBudget;
  /** WASM threads (default: the logical cores, at most 8, when cross-origin isolated or in Node; else 1). */
  readonly threads?: number;
  /** The WebGPU entry point where there is no `navigator.gpu` (Node: `create([])` of npm `webgpu`); in-thread only. */
  readonly gpu?: GPU;
  /**
   * Bytes of GPU memory the model may use (weights + KV cache + activations). WebGPU does not report device memory,
   * so without it only the per-buffer limits are checked before loading; with it a plan over the budget fails early.
   */
  readonly gpuMemoryBudget?: number;
  /**
   * The persisted prompt cache: KV of the system prompt of chat requests (automatically, unless `auto: false`) and of
   * every cached prefix on `saveCache()` is stored and restored when an engine for the same model is created.
   * Default: on with IndexedDB in browsers; off in Node unless given (`{ path }` for a folder, `{}` for process
   * memory). `false` turns it off. See `PersistedPromptCacheOptions`.
   */
  readonly persistedCache?: false | PersistedPromptCacheOptions;
  readonly onProgress?: (progress: LoadProgress) => void;
  /** Aborts loading with `LlmError('aborted')`. */
  readonly signal?: AbortSignal;
}

/** The backend in use and why it was chosen. */
export interface BackendInfo {
  /** 'webgpu' | 'wasm' | 'cpu'. */
  readonly name: string;
  /** e.g. 'webgpu f16 subgroups (NVIDIA …)' or 'wasm relaxed-simd ×4 threads'. */
  readonly description: string;
  /** Why this backend: 'requested', or what ruled out the better one. */
  readonly reason: string;
}

/** What was loaded. */
export interface EngineInfo {
  readonly model: {
    readonly name: string;
    readonly arch: string;
    /** sha256, etag + size, or file name + size: what the prompt cache keys on. */
    readonly identity: string;
    readonly vocabSize: number;
    /** Training context of the model. */
    readonly trainContextLength: number;
    /** Elements of every tensor in the file (what "0.5B" counts). */
    readonly parameterCount: number;
    /** The ggml type holding most matrix weights (`Q4_K`), `(mixed)` appended when others hold over a tenth. */
    readonly quantization: string;
    /**
     * Width of the hidden states, the most `dimensions` `embeddings.create` takes. Optional: hosts built before
     * embeddings leave it out.
     */
    readonly embeddingLength?: number;
    /** The file's `pooling_type` ('none' for chat models; mean/cls/last for embedders, 'rank' for rerankers). */
    readonly pooling?: 'none' | 'mean' | 'cls' | 'last' | 'rank';
  };
  readonly backend: BackendInfo;
  /** KV cells per sequence of this engine. */
  readonly contextLength: number;
  readonly slots: number;
  readonly ubatchSize: number;
  /** Hash of the chat template in use. */
  readonly chatTemplateHash: string;
  /** Set when the model's template did not compile and `templateFallback: 'chatml'` chose ChatML: why. */
  readonly chatTemplateFallback?: string;
}

/** Speed and cache figures. */
export interface EngineStats {
  /** Model load time (parse + upload), ms. */
  readonly loadMs: number;
  /** Warmup decode, ms (0 when skipped). */
  readonly warmupMs: number;
  /** Requests completed (including aborted ones). */
  readonly requests: number;
  /** Prompt tokens per second, over every request since load. */
  readonly prefillTokensPerSecond: number;
  /** Generated tokens per second, over every request since load. */
  readonly decodeTokensPerSecond: number;
  /** Time to first token of the last request, ms (0 before any). */
  readonly timeToFirstTokenMs: number;
  readonly prefillTokens: number;
  readonly decodeTokens: number;
  readonly promptCache: PromptCacheStats;
  /** The KV cache: its element type (`EngineOptions.kvType` or its default) and bytes (K and V, all slots). */
  readonly kvCache: { readonly type: KvType; readonly bytes: number };
}

/** Options of `tokenize`. */
export interface TokenizeOptions {
  /** Add BOS/EOS as the vocab says (default true). */
  readonly addSpecial?: boolean;
  /** Turn special-token text into single ids (default true). */
  readonly parseSpecial?: boolean;
}

/** `engine.chat.completions`. */
export interface ChatCompletions {
  create(request: ChatCompletionRequest & { stream: true }): Promise<AsyncIterable<ChatCompletionChunk>>;
  create(request: ChatCompletionRequest & { stream?: false }): Promise<ChatCompletion>;
  create(request: ChatCompletionRequest): Promise<ChatCompletion | AsyncIterable<ChatCompletionChunk>>;
}

/** `engine.completions`. */
export interface Completions {
  create(request: CompletionRequest & { stream: true }): Promise<AsyncIterable<CompletionChunk>>;
  create(request: CompletionRequest & { stream?: false }): Promise<Completion>;
  create(request: CompletionRequest): Promise<Completion | AsyncIterable<CompletionChunk>>;
}

/** A loaded model ready to answer. */
export interface Engine {
  readonly info: EngineInfo;
  readonly chat: { readonly completions: ChatCompletions };
  readonly completions: Completions;
  /**
   * `embeddings.create({ input, dimensions?, encoding_format?, normalize?, truncate? })`: sentence embeddings of an
   * embedding model (a GGUF whose `pooling_type` is mean, cls or last), L2-normalised by default, in OpenAI's shape.
   * A model without pooling fails with `invalid-request`.
   */
  readonly embeddings: Embeddings;
  /**
   * Scores `documents` against `query` with a reranker (a GGUF with `pooling_type` rank and a `cls.output` head,
   * e.g. Qwen3-Reranker), sorted by `relevance_score`, highest first; `top_n` keeps the best. Other models:
   * `invalid-request`.
   */
  rerank(request: RerankRequest): Promise<RerankResponse>;
  /** Text → token ids with this model's tokenizer. */
  tokenize(text: string, options?: TokenizeOptions): Promise<number[]>;
  /** Token ids → text (special tokens rendered as text when `renderSpecial`). */
  detokenize(ids: readonly number[], options?: { readonly renderSpecial?: boolean }): Promise<string>;
  stats(): Promise<EngineStats>;
  /**
   * Persists the KV of every cached prompt prefix to the persisted prompt cache (see `EngineOptions.persistedCache`),
   * so an engine created later for the same model (after a page reload) starts with them. Resolves the number of
   * entries written or refreshed; 0 when the persisted cache is off or the backend cannot read its KV.
   */
  saveCache(): Promise<number>;
  /** Rejects running and queued requests with `aborted`, then releases all backend memory. Idempotent. */
  unload(): Promise<void>;
}
