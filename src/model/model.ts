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

/** One row of a multi-sequence step: `token` at position `pos` of sequence `slot`. */
export interface SequenceToken {
  readonly slot: number;
  readonly pos: number;
  readonly token: number;
}

/** Options of `Transformer.evalEmbeddings`. */
export interface EmbeddingsEvalOptions {
  readonly logits?: LogitsWanted;
  /** The rows attend to each other bidirectionally (one step), as llama.cpp's non-causal image decode. */
  readonly nonCausal?: boolean;
  /**
   * The rows are an image of grid.nx × grid.ny tokens in raster order: a multi-stream rope model (qwen2vl, qwen3vl)
   * places them at grid positions and continues after them at start + max(nx, ny) (mtmd's M-RoPE). Ignored otherwise.
   */
  readonly grid?: import('./rope-streams.js').ImageGrid;
  readonly signal?: AbortSignal;
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
  /**
   * Runs `tokens` from position 0 of `slot` (overwriting its KV) and returns the hidden states after the output
   * norm ([tokens.length · embeddingLength], row-major), which `model/pooling.ts` pools into an embedding (optional:
   * test doubles may lack it).
   */
  hiddenStates?(tokens: Int32Array, slot: number, options?: { signal?: AbortSignal }): Promise<Float32Array>;
  /**
   * `hiddenStates` of several sequences packed into one forward pass (encoders): each attends only to itself, at
   * positions restarting from 0; returns their hidden states concatenated in order ([Σ lengths · embeddingLength]).
   * Their total must fit one step (≤ `ubatchSize`). Absent: one `hiddenStates` per sequence (`model/packed-hidden.ts`).
   */
  hiddenStatesPacked?(
    sequences: readonly Int32Array[],
    slot: number,
    options?: { signal?: AbortSignal },
  ): Promise<Float32Array>;
  /**
   * `hiddenStatesPacked` of only the row each sequence's `cls` / `last` pooling keeps, [sequences.length ·
   * embeddingLength] (encoders: the last layer's rows after its attention run for those rows alone). Absent: the
   * whole hidden states, pooled afterwards.
   */
  pooledStates?(
    sequences: readonly Int32Array[],
    slot: number,
    pooling: 'cls' | 'last',
    options?: { signal?: AbortSignal },
  ): Promise<Float32Array>;
  /** The classifier of a rank-pooling model (reranker), applied to `hiddenStates` by `model/pooling.ts`; else null. */
  readonly rankHead?: import('./pooling.js').RankHead | null;
  /**
   * Evaluates embedding rows instead of token ids (an image's encoder output, [nRows, nEmbd] f32) at positions
   * startPos … of `slot`, as llama.cpp's mtmd decodes an image chunk: no token lookup and no embedding scale; with
   * `nonCausal` the rows see each other whole (gemma3), so they must fit one step (nRows ≤ ubatchSize). Logits as
   * `eval`.
   */
  evalEmbeddings?(
    rows: Float32Array,
    startPos: number,
    slot: number,
    options?: EmbeddingsEvalOptions,
  ): Promise<Float32Array | null>;
  /** Dense layers applied to the pooled embedding (EmbeddingGemma; `model/pooling.ts` `projectPooled`); else absent. */
  readonly pooledProjection?: import('./pooling.js').PooledProjection | null;
  /** Most rows `evalRows` takes (0 when the model was loaded with one sequence slot). */
  readonly maxSequenceRows: number;
  /**
   * One step over several sequences together (n choices decoding at once): row i runs `rows[i].token` at position
   * `rows[i].pos` of slot `rows[i].slot` (distinct slots); every weight is read once for all rows. Each row's logits
   * stay readable afterwards as `row` i of `readLogits`/`argmax`/`topK`.
   */
  evalRows(rows: readonly SequenceToken[], signal?: AbortSignal): Promise<void>;
  /** Logits ([vocabSize]) of the last evaluated token, or of row `row` of the last `evalRows`. */
  readLogits(row?: number): Promise<Float32Array>;
  /** argmax of those logits, computed on the backend (reads back 4 bytes). */
  argmax(row?: number): Promise<number>;
  /** Top-k of those logits, computed on the backend. */
  topK(k: number, row?: number): Promise<TopK>;
  /**
   * Optional: compiles the backend's kernels for prompt and decode steps ahead of their first use (WebGPU:
   * asynchronously, `Ops.preparePipelines`); `tokens[0]` is a valid id to record them with; evaluates nothing. The
   * warmup calls it first.
   */
  prepareKernels?(tokens: Int32Array, signal?: AbortSignal): Promise<void>;
  /**
   * Optional: true when greedy decode can chain on the backend — `argmaxToInput` leaves its token in the backend's
   * token input, `evalChained` evaluates it — so a step is recorded before the previous token is read back. False
   * on backends without a device-side token input. Models with recurrent state chain too: a chained step evaluates
   * the token the previous step chose, so the state it advances is the sequence's own (engine/pipelined-decode.ts).
   */
  readonly canChainTokens?: boolean;
  /** Optional: `argmax()` whose token also stays in the backend's token input for `evalChained` (canChainTokens). */
  argmaxToInput?(): Promise<number>;
  /**
   * Optional: evaluates, at `startPos` of `slot`, the one token the last `argmaxToInput` left on the backend, keeping
   * its logits as `eval` with 'last' does (canChainTokens).
   */
  evalChained?(startPos: number, slot: number, signal?: AbortSignal): Promise<void>;
  /**
   * Context shift (llama.cpp): in `slot`, drops positions [nKeep, nKeep+nDiscard) of the nPositions filled, moves the
   * later ones down by nDiscard and re-rotates their keys (no re-prefill). Absent on test doubles that cannot; never done for models with recurrent state.
   */
  shiftContext?(slot: number, nKeep: number, nDiscard: number, nPositions: number): Promise<void>;
  /**
   * Copies the first nPositions of KV from one slot to another, and the whole recurrent state (which describes the
   * source after its last evaluated token, whatever nPositions says: the caller copies recurrent models' slots only
   * at that point).
   */
  copySlot(srcSlot: number, dstSlot: number, nPositions: number): void;
  /** True when some layer keeps recurrent state (short convolutions): it cannot be truncated to a prefix. */
  readonly hasRecurrentState: boolean;
  /** Where a multi-stream rope model's slots hold images (persisted with a prefix's KV); null/absent otherwise. */
  readonly ropeStreams?: import('./rope-streams.js').RopeStreams | null;
  /** A snapshot of `slot`'s recurrent state after its last evaluated token; null for models without one. */
  readState(slot: number): Promise<Float32Array | null>;
  /** Restores a snapshot taken by `readState` into `slot` (no-op for models without recurrent state). */
  writeState(slot: number, state: Float32Array): void;
  /** Releases backend memory. */
  destroy(): void;
}
