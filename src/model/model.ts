/**
 * The loaded model as the engine sees it: hyper-parameters plus a forward pass over a backend. Implemented by
 * `model/transformer.ts`; consumed by `engine/`.
 */

import type { Ops, TopK } from '../backend/ops.js';

/** What `eval` leaves readable after the last step. */
export type LogitsWanted = 'last' | 'all' | 'none';

/** A model ready to run on one backend. */
export interface Transformer {
  /** Hyper-parameters read from the GGUF metadata (see `model/config.ts`). */
  readonly config: import('./config.js').ModelConfig;
  readonly ops: Ops;
  /** Largest number of tokens processed in one step (longer inputs are chunked). */
  readonly ubatchSize: number;
  /**
   * Runs `tokens` at positions startPos … of sequence `slot`, in chunks of `ubatchSize`, writing their KV.
   * With 'last' the final token's logits stay on the backend for `readLogits`/`argmax`/`topK`; with 'all' every
   * position's logits are returned ([tokens.length · vocabSize], row-major).
   */
  eval(
    tokens: Int32Array,
    startPos: number,
    slot: number,
    options?: { logits?: LogitsWanted; signal?: AbortSignal },
  ): Promise<Float32Array | null>;
  /**
   * Runs `tokens` from position 0 of `slot` (overwriting its KV) and returns the hidden states after the output
   * norm ([tokens.length · embeddingLength], row-major), which `model/pooling.ts` pools into an embedding (optional:
   * test doubles may lack it).
   */
  hiddenStates?(tokens: Int32Array, slot: number, options?: { signal?: AbortSignal }): Promise<Float32Array>;
  /** The classifier of a rank-pooling model (reranker), applied to `hiddenStates` by `model/pooling.ts`; else null. */
  readonly rankHead?: import('./pooling.js').RankHead | null;
  /** Logits of the last evaluated token ([vocabSize]). */
  readLogits(): Promise<Float32Array>;
  /** argmax of the last evaluated token's logits, computed on the backend (reads back 4 bytes). */
  argmax(): Promise<number>;
  /** Top-k of the last evaluated token's logits, computed on the backend. */
  topK(k: number): Promise<TopK>;
  /** Copies the first nPositions of KV from one slot to another. */
  copySlot(srcSlot: number, dstSlot: number, nPositions: number): void;
  /** Releases backend memory. */
  destroy(): void;
}
