/**
 * The loaded model as the engine sees it: hyper-parameters plus a forward pass over a backend. Implemented by
 * `model/transformer.ts`; consumed by `engine/`.
 */

import type { KvType } from '../backend/kv-type.js';
import type { Ops, TopK } from '../backend/ops.js';

/** What `eval` leaves readable after the last step. */
export type LogitsWanted = 'last' | 'all' | 'none';

/** A loaded model's KV cache. */
export interface KvCacheInfo {
  /** Element type of K and V. */
  readonly type: KvType;
  /** Bytes of K and V, every layer and slot. */
  readonly bytes: number;
}

/** A model ready to run on one backend. */
export interface Transformer {
  /** Hyper-parameters read from the GGUF metadata (see `model/config.ts`). */
  readonly config: import('./config.js').ModelConfig;
  readonly ops: Ops;
  /** Largest number of tokens processed in one step (longer inputs are chunked). */
  readonly ubatchSize: number;
  /** The KV cache's element type and size (absent on test doubles without a cache). */
  readonly kvCache?: KvCacheInfo;
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
  /** Logits of the last evaluated token ([vocabSize]). */
  readLogits(): Promise<Float32Array>;
  /** argmax of the last evaluated token's logits, computed on the backend (reads back 4 bytes). */
  argmax(): Promise<number>;
  /** Top-k of the last evaluated token's logits, computed on the backend. */
  topK(k: number): Promise<TopK>;
  /**
   * Context shift (llama.cpp): in `slot`, drops positions [nKeep, nKeep+nDiscard) of the nPositions filled, moves the
   * later ones down by nDiscard and re-rotates their keys (no re-prefill). Absent on test doubles that cannot.
   */
  shiftContext?(slot: number, nKeep: number, nDiscard: number, nPositions: number): Promise<void>;
  /** Copies the first nPositions of KV from one slot to another. */
  copySlot(srcSlot: number, dstSlot: number, nPositions: number): void;
  /** Releases backend memory. */
  destroy(): void;
}
