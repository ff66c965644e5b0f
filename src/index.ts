/**
 * The public API of webgguf: `createEngine` (in this thread) and `createWorkerEngine` (in a Web Worker), both
 * returning the same OpenAI-shaped `Engine`; the model store helpers for managing downloaded models; and
 * `LlmError`. Nothing else is public.
 */

export { createEngine, modelIdentityOf } from './api/create-engine.js';
export { createWorkerEngine, connectWorkerEngine, type WorkerEngineOptions } from './worker/client.js';
export type {
  BackendChoice,
  BackendInfo,
  ChatCompletions,
  Completions,
  Engine,
  EngineInfo,
  EngineOptions,
  EngineStats,
  LoadProgress,
  ModelInput,
  TokenizeOptions,
} from './api/engine.js';
export type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionRequest,
  ChatMessage,
  ChatRole,
  Completion,
  CompletionChunk,
  CompletionRequest,
  CompletionUsage,
  FinishReason,
  SamplingOptions,
  SamplingRequest,
} from './api/types.js';
export type { PromptCacheStats } from './engine/prompt-cache.js';
export { LlmError, isLlmError, ERROR_CODES, type ErrorCode, type ErrorDetails } from './errors.js';
export {
  downloadModel,
  deleteModel,
  listModels,
  storageUsage,
  readManifest,
  type DownloadModelOptions,
  type DownloadProgress,
  type ModelManifest,
  type StorageUsage,
} from './io/index.js';
