/**
 * The public API of webgguf: `createEngine` (in this thread), `createWorkerEngine` (in a Web Worker) and
 * `createSharedWorkerEngine` (one worker shared by every tab), all returning the same OpenAI-shaped `Engine`; the
 * model store helpers for managing downloaded models; and `LlmError`. Nothing else is public.
 */

export { createEngine, modelIdentityOf } from './api/create-engine.js';
export { createWorkerEngine, connectWorkerEngine, type WorkerEngineOptions } from './worker/client.js';
/**
 * One engine for all tabs of an origin: `createSharedWorkerEngine` (same API as `createWorkerEngine`, in a
 * `SharedWorker`, falling back to a dedicated worker where there is none); see its TSDoc for the sharing rules.
 */
export {
  createSharedWorkerEngine,
  type EngineSharing,
  type SharedWorkerEngine,
  type SharedWorkerEngineOptions,
} from './worker/shared-client.js';
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
  ChatTextPart,
  ChatImagePart,
  ChatRequestMessage,
  ChatToolCall,
  ChatToolCallDelta,
  ChatTool,
  ChatToolChoice,
  ChatLogprobs,
  ChatTokenLogprob,
  ChatTopLogprob,
  CompletionLogprobs,
  ResponseFormat,
} from './api/types.js';
export type {
  EmbeddingData,
  EmbeddingRequest,
  EmbeddingResponse,
  EmbeddingUsage,
  Embeddings,
  RerankRequest,
  RerankResponse,
  RerankResult,
} from './api/embedding-types.js';
export type { PromptCacheStats } from './engine/prompt-cache.js';
export type { KvType } from './backend/kv-type.js';
export type { PersistedPromptCacheOptions } from './engine/persisted-cache.js';
export { LlmError, isLlmError, ERROR_CODES, type ErrorCode, type ErrorDetails } from './errors.js';
export {
  downloadModel,
  deleteModel,
  listModels,
  storageUsage,
  readManifest,
  deleteSplitModel,
  type DownloadModelOptions,
  type DownloadPhase,
  type DownloadProgress,
  type ModelManifest,
  type ModelStoreOptions,
  type ProgressCallback,
  type StorageEstimator,
  type StorageUsage,
} from './io/index.js';
export {
  listPromptCaches,
  deletePromptCache,
  memoryPromptCacheStore,
  idbPromptCacheStore,
  filePromptCacheStore,
  type PromptCacheRecord,
  type PromptCacheStore,
  type PromptCacheStoreOptions,
} from './io/prompt-cache-store.js';
