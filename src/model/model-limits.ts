/**
 * Named bounds on the hyper-parameters a model file declares. Every count read from metadata is checked against one
 * of these *before* anything is sized by it (a hostile 1 KB header must not allocate by its own claims), and then
 * against the tensors the file actually holds (`checkConfigAgainstTensors`). The limits sit far above every real
 * model, so they only ever reject corrupt or hostile files.
 */

/** Bounds on model hyper-parameters, each with the reason for its value. */
export interface ModelLimits {
  /** Most transformer blocks: llama.cpp's `LLAMA_MAX_LAYERS` (the largest models have ~130). */
  readonly maxLayers: number;
  /** Most mixture-of-experts experts: llama.cpp's `LLAMA_MAX_EXPERTS`. */
  readonly maxExperts: number;
  /** Most attention heads (query or KV). Real models have ≤ 128. */
  readonly maxHeads: number;
  /** Widest hidden state (`embedding_length`); real models are ≤ 32k. */
  readonly maxEmbedding: number;
  /** Widest attention head (`attention.key_length`); real models are ≤ 512. */
  readonly maxHeadDim: number;
  /** Widest FFN (`feed_forward_length`); real models are ≤ 128k. */
  readonly maxFeedForward: number;
  /** Longest training context (`context_length`, sliding windows, YaRN original context); 10M-token models exist. */
  readonly maxContextLength: number;
  /** Largest vocabulary (`vocab_size`); real ones are ≤ 260k. */
  readonly maxVocab: number;
}

/** The bounds applied by `readStandardConfig` and `readModelConfig`. */
export const MODEL_LIMITS: ModelLimits = Object.freeze({
  maxLayers: 512,
  maxExperts: 512,
  maxHeads: 4096,
  maxEmbedding: 1 << 20,
  maxHeadDim: 1 << 16,
  maxFeedForward: 1 << 24,
  maxContextLength: 1 << 28,
  maxVocab: 1 << 24,
});
