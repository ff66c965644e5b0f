/**
 * The `Ops` interface: the dozen operations the one forward pass (`model/transformer.ts`) is written against.
 * Three backends implement it — the plain-TS reference (`backend/cpu`), WASM-SIMD (`backend/wasm`) and WebGPU
 * (`backend/webgpu`) — and every one is checked against the reference.
 *
 * Conventions
 * - Activations are logically f32, row-major `[rows, cols]`, allocated once at their maximum row count (the ubatch
 *   size); each op is told how many rows `n` to process this step (n ≤ maxRows).
 * - Weights keep ggml's layout: a matrix has `nRows` rows of `rowLength` elements, stored in GGUF blocks of its type.
 *   `matmul` computes `out[n, nRows] = x[n, rowLength] · Wᵀ`.
 * - A step is `beginStep` … ops … `endStep`. Ops may be recorded (WebGPU) or run at once (CPU); only `read*`,
 *   `argmax` and `topK` return results, as promises, and they see every op issued before them.
 * - Positions in a step are contiguous: token i of the step is at position `startPos + i` of sequence `slot`. A step of
 *   several sequences (one row each, `n` choices decoding together) runs the row-wise ops over all rows and the
 *   per-sequence ops (rope, KV store, attention) once per sequence after `setSequence`.
 */

import type { AltUpPrimitives } from './altup-primitives.js';
import type { DeltaNetInputs, DeltaNetWeights } from './delta-net-types.js';
import type { MoeRouteParams, MoeStep } from './moe-step.js';
import type { GgmlType } from '../gguf/types.js';
import type { KvShift } from './kv-shift.js';
import type { KvType } from './kv-type.js';
import type { Mamba2Inputs, Mamba2Weights } from './mamba2.js';
import type { RopePositions, RopeSections } from './rope-multi.js';

/** A tensor as the model file describes it, to be uploaded. */
export interface WeightInfo {
  readonly name: string;
  readonly type: GgmlType;
  /** ggml `ne` order: shape[0] = row length. 1-D tensors (norms, biases) have one entry. */
  readonly shape: readonly number[];
}

/**
 * A weight being streamed onto a backend (`Ops.beginWeight`): the loader writes the tensor's GGUF bytes piece by
 * piece, in order, into `target`s and `commit`s each, so reading the file, rearranging rows and uploading overlap and
 * no copy of the whole tensor is ever made. Pieces are whole rows; every piece but the last of a tensor is a multiple
 * of 4 rows. At most two pieces are outstanding (targeted, not yet committed) at a time.
 */
export interface WeightStream {
  /**
   * Memory to fill with bytes `[offset, offset + length)` of the tensor: a view of backend memory or a staging
   * buffer, valid until that piece is committed. The backend allocates nothing here (reads may be in flight).
   */
  target(offset: number, length: number): Uint8Array;
  /** The piece `[offset, offset + length)` is filled: rearrange/upload it. */
  commit(offset: number, length: number): void;
  /**
   * Where present, `commit` that also finds non-finite values (the same check as the loader's `firstNonFinite`, made
   * on the backend's own pass over the bytes, so the loader skips its scan): the piece's index of the first non-finite
   * element, or -1. Absent where this stream cannot check its type.
   */
  readonly commitChecked?: (offset: number, length: number) => number;
  /** Every byte is committed: the weight. */
  finish(): Promise<Weight>;
  /** Releases what the stream holds when it will not finish (abort, read error). */
  cancel(): void;
}

/** A weight living on a backend. Opaque beyond these fields. */
export interface Weight {
  readonly name: string;
  readonly type: GgmlType;
  /** Elements per row (ggml ne0; K of a matmul). */
  readonly rowLength: number;
  /** Number of rows (product of the other dims; N of a matmul). 1 for a vector. */
  readonly nRows: number;
}

/** An f32 activation buffer `[maxRows, cols]` living on a backend. Opaque beyond these fields. */
export interface Activation {
  readonly label: string;
  readonly maxRows: number;
  readonly cols: number;
}

/** KV geometry of one layer; `nKvHeads` 0 = the layer stores no KV of its own (nothing is allocated for it). */
export interface KvLayerSpec {
  readonly nKvHeads: number;
  /** Width of one K (and V) head. */
  readonly headDim: number;
}

/**
 * Static KV cache geometry, allocated once for the context length. Layers may differ (per-layer KV head counts and
 * head sizes): layer l stores rows of `layers[l].nKvHeads · layers[l].headDim` values.
 */
export interface KvCacheSpec {
  /** Independent sequences (conversations), each with its own `contextLength` cells per layer. */
  readonly nSlots: number;
  readonly contextLength: number;
  /** One record per layer, layer 0 first (the layer count is `layers.length`). */
  readonly layers: readonly KvLayerSpec[];
  /**
   * Element type of K and V (llama.cpp `-ctk`/`-ctv`); default: the backend's own (f32 on cpu and wasm, f16 or f32 on
   * WebGPU as its shader path). A backend that cannot store a type throws `LlmError('unsupported-type')`.
   */
  readonly kvType?: KvType;
}

/**
 * Recurrent state geometry (short-convolution layers), allocated once: per sequence slot and layer, `layerSizes[l]`
 * f32 values (0 for layers without recurrent state). Unlike KV it is not indexed by position: it always describes
 * the sequence after its last evaluated token, so it is copied or restored whole, never truncated.
 */
export interface RecurrentStateSpec {
  readonly nSlots: number;
  /** f32 values of state per slot for each layer ([nLayers]). */
  readonly layerSizes: readonly number[];
}

/**
 * KV rows of one slot as raw bytes, for persisting a prompt prefix: for each layer, the K rows then the V rows of
 * positions 0 … nPositions−1 (that layer's `nKvHeads·headDim` values each, `kvRowBytes` bytes), little-endian.
 */
export interface KvRows {
  /** The cache's KV type; block types hold ggml blocks (`block_q8_0`, `block_q4_0`) of each row. */
  readonly elementType: KvType;
  readonly nPositions: number;
  readonly data: Uint8Array;
}

/** Rotary position embedding parameters (llama.cpp `ggml_rope_ext`). */
export interface RopeParams {
  /** 'norm': rotate pairs (2i, 2i+1) (llama); 'neox': pairs (i, i + nRot/2) (qwen2, phi3, gemma …). */
  readonly kind: 'norm' | 'neox';
  readonly headDim: number;
  /** Dimensions rotated per head (≤ headDim); the rest pass through (partial rotary). */
  readonly nRot: number;
  /** Base frequency (`rope.freq_base`). */
  readonly theta: number;
  /** 1 / linear scaling factor (`rope.scaling.factor`); 1 when unscaled. */
  readonly freqScale: number;
  /** Per-dimension frequency divisors (`rope_freqs.weight`, llama3 scaling, LongRoPE), nRot/2 entries. */
  readonly freqFactors?: Float32Array;
  /** YaRN parameters; omitted when the model does not use YaRN. */
  readonly yarn?: {
    readonly extFactor: number;
    readonly attnFactor: number;
    readonly betaFast: number;
    readonly betaSlow: number;
    readonly nCtxOrig: number;
  };
  /**
   * Multi-stream rope (`ggml_rope_multi`, qwen2vl/qwen3vl; `rope-multi.ts`): NEOX pairs whose angles come from the
   * step's position streams (`StepBatch.positions`, text rows (p, p, p, 0) when absent). Omitted: one position.
   */
  readonly multi?: RopeSections;
}

/** Attention parameters of one layer. */
export interface AttentionParams {
  readonly nHeads: number;
  readonly nKvHeads: number;
  readonly headDim: number;
  /** Multiplier of q·k (1/√headDim unless the architecture says otherwise). */
  readonly scale: number;
  /** Keys at positions ≤ pos − slidingWindow are masked; 0 = no window. */
  readonly slidingWindow: number;
  /** Attention logits become cap·tanh(s/cap) before the mask; 0 = off (gemma2). */
  readonly softcap: number;
  /**
   * false: every row sees every position of the step's sequence up to startPos+n−1 (encoders, `attention.causal`
   * false; gemma3's image chunks), a sliding window still masking keys pos − k ≥ window as llama.cpp's mask does
   * (or the symmetric window with `symmetricWindow`). Default true (row i sees 0 … startPos+i).
   */
  readonly causal?: boolean;
  /** Per-head sink logits [nHeads] f32 (gpt-oss): softmax denominators also count e^(sink − max); absent: none. */
  readonly sinks?: Weight | null;
  /**
   * With `causal` false and a sliding window: row at position p sees only p − ⌊slidingWindow/2⌋ … p + ⌊slidingWindow/2⌋
   * (llama.cpp's LLAMA_SWA_TYPE_SYMMETRIC: gemma-embedding). Default false.
   */
  readonly symmetricWindow?: boolean;
  /**
   * ALiBi (jina-bert-v2): head h adds slope_h · −|pos − k| to each scaled score, ggml's slopes for this maximum bias
   * (`backend/alibi.ts`); absent or 0: none.
   */
  readonly alibiMaxBias?: number;
  /**
   * With `causal` false: the one row (0 … n−1) whose output is needed (the pooled row of an encoder's last layer);
   * a backend may leave the other rows' outputs unwritten. Absent: every row.
   */
  readonly onlyRow?: number;
}

/** The tokens of one step: `tokens[i]` sits at position `startPos + i` of sequence `slot`. */
export interface StepBatch {
  readonly tokens: Int32Array;
  readonly startPos: number;
  readonly slot: number;
  /**
   * The step's one token id is already in the backend's token input, put there on the device by `argmaxToInput`
   * (`tokens` then holds a placeholder): the step needs no host write and can be recorded before that argmax is
   * read back. Only backends with `argmaxToInput` are given it.
   */
  readonly tokensOnDevice?: boolean;
  /**
   * Position streams of a multi-stream rope ([4, tokens.length], `rope-multi.ts`): an image's grid positions; absent:
   * text rows (p, p, p, 0). Ignored by single-position rope; `setSequence` sets a sequence's own.
   */
  readonly positions?: RopePositions;
  /**
   * A step of several sequences (n choices): row i is at position `pos` of slot `slot` (`slot`, `startPos`: row 0's).
   * Backends with `recurrentRows` advance each row's own recurrent state. Kept through `setSequence`.
   */
  readonly sequences?: readonly { readonly slot: number; readonly pos: number }[];
}

/** Activation function of a gated FFN: SwiGLU uses 'silu', GEGLU 'gelu' (tanh approximation, as llama.cpp). */
export type GluActivation = 'silu' | 'gelu';

/** Candidates from `topK`, sorted by logit, highest first. */
export interface TopK {
  readonly ids: Int32Array;
  readonly logits: Float32Array;
}

/** An RMSNorm's weight and epsilon: x / sqrt(mean(x²) + eps) · weight over each whole row of x. */
export interface RmsNormWeight {
  readonly weight: Weight; // [rowLength]
  readonly eps: number;
}

/** An RMSNorm folded into a fused kernel (WebGPU's own name for `RmsNormWeight`). */
export type FusedNorm = RmsNormWeight;

/** What a backend's fused matmul kernel folds into the product (all optional). */
export interface FusedMatmulOptions {
  /** Bias vector of w.nRows, added to the product. */
  readonly bias?: Weight | null;
  /** Normalise each row of x first (x itself is not modified); x must have exactly w.rowLength columns. */
  readonly norm?: FusedNorm | null;
  /** Add the result to `out` (a residual connection) instead of overwriting it. */
  readonly accumulate?: boolean;
}

/** One projection of `normMatmul`: out[n, weight.nRows] = norm(x) · weightᵀ (+ bias). */
export interface Projection {
  readonly out: Activation;
  readonly weight: Weight;
  readonly bias: Weight | null;
}

/** What `matmulResidual` adds to the product before the residual add, and the buffer it may compute in. */
export interface ResidualOptions {
  /** Bias vector of w.nRows. */
  readonly bias: Weight | null;
  /** RMSNorm of the product before it is added (gemma2/3 post-norms), or null. */
  readonly postNorm: RmsNormWeight | null;
  /** Multiplier of the (post-normed) product before it is added (granite's residual scale); 1 = none. */
  readonly scale: number;
  /** [maxRows ≥ n, w.nRows] buffer the default composition computes the product in; not `x` or the input. */
  readonly scratch: Activation;
}

/** Buffers the default `gatedFfn` composition computes in: normed [n, x.cols], gate and up [n, gate.nRows]. */
export interface GluScratch {
  readonly normed: Activation;
  readonly gate: Activation;
  readonly up: Activation;
}

/** The operations of a forward pass. */
export interface Ops {
  /** 'cpu' | 'wasm' | 'webgpu'. */
  readonly name: string;
  /** Human-readable variant, e.g. 'webgpu f16 subgroups (lavapipe)' or 'wasm relaxed-simd ×2 threads'. */
  readonly description: string;
  /** `shortConv`, `deltaNet`, `mamba2` honour `StepBatch.sequences` (each row on its own slot's conv window and state). */
  readonly recurrentRows?: boolean;

  /** Uploads one tensor from its raw GGUF bytes (the backend may repack or dequantize). */
  uploadWeight(info: WeightInfo, data: Uint8Array, signal?: AbortSignal): Promise<Weight>;
  /**
   * Starts streaming one tensor in (see `WeightStream`); validates and allocates like `uploadWeight`. Optional: the
   * loader falls back to reading each tensor whole and calling `uploadWeight`.
   */
  beginWeight?(info: WeightInfo): WeightStream;
  /**
   * A hint before the weights stream in: about `bytes` of them follow. A backend may make room for them at once
   * (the WASM memory grows once instead of in steps, each of which costs V8 a garbage collection). Optional.
   */
  reserveWeights?(bytes: number): void;
  /** Allocates an activation buffer (done once, at plan time, never per step). */
  createActivation(label: string, maxRows: number, cols: number): Activation;
  /**
   * Allocates (or reallocates) the KV cache; contents start as zeros. Returns the element type it stores
   * (`spec.kvType`, or the backend's default).
   */
  createKvCache(spec: KvCacheSpec): KvType;

  /** Starts a step: makes the batch's token ids and positions visible to the ops that follow. */
  beginStep(batch: StepBatch): void;
  /**
   * Within a step, points the per-sequence ops that follow (`rope`, `storeKv`, `ropeStoreKv`, `attention`) at
   * sequence `slot` with row 0 of their activations at position `startPos` (a step of several sequences issues them
   * once per sequence on that sequence's rows); the step's token ids are unchanged. `positions` ([4, n]) are a
   * multi-stream rope's streams of those rows (text after an image); absent: text rows at their KV positions.
   */
  setSequence(slot: number, startPos: number, positions?: RopePositions): void;
  /** out[i] = row `tokens[i]` of `table`, dequantized. */
  embed(out: Activation, table: Weight, n: number): void;
  /**
   * out[0 … n) = `rows` ([n, out.cols] f32, row-major): a step whose input is embedding rows (an image's, from
   * `vision/`) instead of token ids. Issue it where `embed` would go; the step's token ids are then placeholders.
   */
  setRows(out: Activation, rows: Float32Array, n: number): void;
  /**
   * RMS-normalises each group of `groupSize` columns of each row (default: the whole row), then multiplies by
   * `weight` (length groupSize) when given: out = x / sqrt(mean(x²) + eps) · w. `out` may be `x`.
   */
  rmsNorm(out: Activation, x: Activation, weight: Weight | null, eps: number, n: number, groupSize?: number): void;
  /** out[n, w.nRows] = x[n, w.rowLength] · wᵀ (+ bias, a vector of w.nRows). */
  matmul(out: Activation, x: Activation, w: Weight, n: number, bias?: Weight | null): void;
  /**
   * Mixture-of-experts routing of n tokens: from router logits [n, nExperts] picks the `ids.cols` most probable
   * experts per token (highest first, ties to the lower index) into `ids` [n, nUsed] and their weights (probabilities,
   * normalised and scaled per `params`) into `weights` [n, nUsed]. Stays on the backend (no readback).
   */
  moeRoute(ids: Activation, weights: Activation, logits: Activation, n: number, params: MoeRouteParams): void;
  /**
   * Gather matmul over selected experts (ggml `mul_mat_id`): w stacks `nExperts` matrices of w.nRows / nExperts rows;
   * for token t and slot k < ids.cols, out row t·nUsed + k = x row (xPerSlot ? t·nUsed + k : t) · W[ids[t, k]]ᵀ.
   * Reads only the selected experts' rows.
   */
  matmulExperts(
    out: Activation,
    x: Activation,
    w: Weight,
    nExperts: number,
    ids: Activation,
    n: number,
    xPerSlot: boolean,
  ): void;
  /** out[t] = Σ_k weights[t, k] · y[t·nUsed + k] for t < n (nUsed = weights.cols); out [n, y.cols]. */
  moeCombine(out: Activation, y: Activation, weights: Activation, n: number): void;
  /** out[t·nUsed + k] += bias row ids[t, k] for t < n (bias: an f32 vector of nExperts rows of out.cols values). */
  addExpertBias(out: Activation, bias: Weight, ids: Activation, n: number): void;
  /** ggml `swiglu_oai` (gpt-oss): x = min(gate, 7), y = clamp(up, −7, 7), out = x·σ(1.702·x)·(y + 1), n rows. */
  swigluOai(out: Activation, gate: Activation, up: Activation, n: number): void;
  /** out[t] += sigmoid(gate[t, 0]) · y[t] for t < n (a sigmoid-gated residual, qwen2moe's shared expert). */
  sigmoidGatedAdd(out: Activation, y: Activation, gate: Activation, n: number): void;
  /** Rotates x in place, viewed as [n, cols / headDim heads, headDim], at positions startPos + i. */
  rope(x: Activation, n: number, params: RopeParams): void;
  /** Writes k and v ([n, nKvHeads·headDim]) into `layer` of the step's slot at positions startPos … startPos+n−1. */
  storeKv(layer: number, k: Activation, v: Activation, n: number): void;
  /**
   * Causal attention of q ([n, nHeads·headDim]) over the cached keys/values of `layer` in the step's slot, positions
   * 0 … startPos+i for row i (within the sliding window), with GQA (head h reads kv head h / (nHeads/nKvHeads)).
   */
  attention(out: Activation, q: Activation, layer: number, n: number, params: AttentionParams): void;
  /** out = act(gate) · up, elementwise. */
  glu(out: Activation, gate: Activation, up: Activation, n: number, act: GluActivation): void;
  /** out = a + b, elementwise. `out` may alias `a` or `b`. */
  add(out: Activation, a: Activation, b: Activation, n: number): void;
  /** x *= s in place. */
  scale(x: Activation, s: number, n: number): void;
  /** x = cap · tanh(x / cap) in place (gemma2 final-logit soft-capping). */
  softcap(x: Activation, cap: number, n: number): void;
  /** x = min(max(x, lo), hi) in place over n rows, lo ≤ hi finite (gemma4v's clippable linears, `ggml_clamp`). */
  clamp(x: Activation, lo: number, hi: number, n: number): void;
  /**
   * out[dstRow … dstRow+n) = x[srcRow … srcRow+n) (e.g. the last row before the lm head); `dstRow` defaults to 0.
   * When out is x the two ranges must not overlap.
   */
  copyRows(out: Activation, x: Activation, srcRow: number, n: number, dstRow?: number): void;
  /*
   * Compound steps. `CompositeOps` (backend/composite-ops.ts) composes each from the primitives above; a backend
   * with fused kernels overrides it and falls back to that composition where its kernels do not apply.
   */
  /**
   * Normalises x once and projects it: for each projection, out = rmsNorm(x) · weightᵀ (+ bias); with `norm` null,
   * out = x · weightᵀ (+ bias) (olmo2's blocks have no pre-norm). `normed` ([maxRows ≥ n, x.cols], not x) may
   * receive rmsNorm(x); x itself is never modified. No out may be x or normed.
   */
  normMatmul(
    normed: Activation,
    x: Activation,
    norm: RmsNormWeight | null,
    projections: readonly Projection[],
    n: number,
  ): void;
  /**
   * Residual add of a projection: x[n, w.nRows] += scale · postNorm(input · wᵀ + bias). `options.scratch` may be
   * overwritten.
   */
  matmulResidual(x: Activation, input: Activation, w: Weight, n: number, options: ResidualOptions): void;
  /**
   * Gated FFN up to its down projection: out[n, gate.nRows] = act(rmsNorm(x) · gateᵀ) · (rmsNorm(x) · upᵀ), or of
   * x itself when `norm` is null. The scratch buffers may be overwritten; `out` must be none of them and not x.
   */
  gatedFfn(
    out: Activation,
    x: Activation,
    norm: RmsNormWeight | null,
    gate: Weight,
    up: Weight,
    n: number,
    act: GluActivation,
    scratch: GluScratch,
  ): void;
  /**
   * Residual mixture-of-experts FFN: x[n, nEmbd] += Σ_k w_k · expert_k(rmsNorm(x)) (+ the shared expert), with the
   * experts routed by `step.router` (see `moeRoute`, `matmulExperts`). `step.scratch` may be overwritten.
   */
  moeFfn(x: Activation, norm: RmsNormWeight, step: MoeStep, n: number): void;
  /** `rope(q)`, `rope(k)` (same params, in place), then `storeKv(layer, k, v)`. */
  ropeStoreKv(layer: number, q: Activation, k: Activation, v: Activation, n: number, params: RopeParams): void;
  /**
   * Short gated convolution of the step's tokens (lfm2), from bcx = in_proj(x) ([n, 3·C] as B | C | x blocks of C
   * columns): out[i, c] = C[i, c] · Σ_k kernel[c, k] · w[i + k, c] over the window w = [state ‖ B·x] of
   * (kernel.rowLength − 1) + n rows, kernel [C rows, taps]. The state of `layer` in the step's slot (its last taps − 1
   * window rows, [taps − 1, C]) is read, then replaced by the window's last rows; at startPos 0 it reads as zeros.
   */
  shortConv(out: Activation, bcx: Activation, layer: number, n: number, kernel: Weight): void;
  /**
   * Gated DeltaNet token mixer of the step's tokens (qwen35): conv1d + SiLU over `inputs.mixed` with the conv state,
   * L2-normalised q/k, the gated delta rule per value head on its [headV, headK] state (decay exp(softplus(alpha +
   * dtBias)·a), write strength sigmoid(beta)), then per-head RMSNorm · norm · SiLU(z) → out [n, nVHeads·headV]. The
   * state of `layer` in the step's slot is advanced past the n tokens; at startPos 0 it reads as zeros.
   */
  deltaNet(out: Activation, inputs: DeltaNetInputs, layer: number, n: number, w: DeltaNetWeights, eps: number): void;
  /**
   * Mamba-2 token mixer of the step's tokens (llama.cpp `build_mamba2_layer`): from zxbcdt = z | xBC | dt, causal
   * depthwise conv1d (+ bias) + SiLU over xBC with the conv state, the selective scan per head (dt = softplus(dt +
   * dtBias), state = state·exp(dt·a) + dt·x·Bᵀ, y = state·C + D·x, B and C of the head's group), then y · SiLU(z)
   * RMS-normalised per group (dInner / nGroups columns) × norm (when the layer has one) → out [n, nHeads·headDim]. The state of `layer` in the
   * step's slot is advanced past the n tokens; at startPos 0 it reads as zeros.
   */
  mamba2(out: Activation, inputs: Mamba2Inputs, layer: number, n: number, w: Mamba2Weights, eps: number): void;
  /** x = max(x, 0)² in place over n rows (nemotron_h's ungated relu² MLP, llama.cpp `LLM_FFN_RELU_SQR`). */
  reluSquared(x: Activation, n: number): void;
  /** Splits per-head [q | gate] rows of qg ([n, 2·cols]) into q and gate ([n, cols] each, heads of headDim). */
  splitHeadPairs(q: Activation, gate: Activation, qg: Activation, n: number, headDim: number): void;
  /** x[r, i] *= sigmoid(gate[r, i]) for n rows (qwen35's gated attention output). */
  mulSigmoid(x: Activation, gate: Activation, n: number): void;
  /** gemma3n's AltUp and activation-sparsity primitives (reference: src/backend/altup-host.ts). */
  readonly altUp: AltUpPrimitives;
  /**
   * LayerNorm of each row (encoders: bert): out = (x − mean(x)) / sqrt(var(x) + eps) · weight + bias, weight and bias
   * [x.cols] each when given (ggml_norm, then ggml_mul and ggml_add). `out` may be `x`.
   */
  layerNorm(out: Activation, x: Activation, weight: Weight | null, bias: Weight | null, eps: number, n: number): void;
  /**
   * x = gelu(x) in place, llama.cpp's tanh approximation as its CPU backend tabulates it (ggml_gelu with
   * GGML_GELU_FP16: x and the result rounded to f16; 0 for x ≤ −10, x for x ≥ 10): bert's sequential FFN.
   */
  gelu(x: Activation, n: number): void;
  /** Ends the step: submits recorded work. */
  endStep(): void;

  /** Reads the first n rows of x back (n·cols floats). */
  read(x: Activation, n: number): Promise<Float32Array>;
  /** Index of the largest value of `row` (first one on ties). */
  argmax(x: Activation, row: number): Promise<number>;
  /** The k largest values of `row` with their indices, highest first (ties: lower index first). */
  topK(x: Activation, row: number, k: number): Promise<TopK>;
  /**
   * Optional (WebGPU): `argmax` written on the device straight into the token input the next step's `embed`
   * reads, so that step (`StepBatch.tokensOnDevice`) can be recorded and submitted before this resolves.
   */
  argmaxToInput?(x: Activation, row: number): Promise<number>;
  /**
   * Optional (WebGPU): runs `record` — steps and reads, as a warmup issues them — without executing anything (its
   * reads resolve with zeros) to learn the pipelines those steps use, and compiles them asynchronously
   * (`createComputePipelineAsync`) instead of at their first use; resolves once they are built.
   */
  preparePipelines?(record: () => Promise<void>): Promise<void>;
  /**
   * Optional (WebGPU): fetches the kernels of the layer kinds and weight types a plain transformer does not use
   * (recurrent, MoE, AltUp, IQ1–IQ3: a separate chunk); model loaders await it before uploading such a model.
   */
  loadFeatureKernels?(): Promise<void>;

  /**
   * Context shift of `slot` (llama.cpp seq_rm + seq_add with the K-shift; `kv-shift.ts`): drops positions
   * [nKeep, nKeep+nDiscard), moves the later ones down and re-rotates their keys in place. Resolves when done.
   */
  shiftKv(slot: number, shift: KvShift): Promise<void>;
  /** Allocates the recurrent state of every slot (only called for models with recurrent layers); contents are zeros. */
  createRecurrentState(spec: RecurrentStateSpec): void;
  /** Copies every layer's recurrent state of one slot to another (n > 1, prompt-cache reuse). */
  copyRecurrentState(srcSlot: number, dstSlot: number): void;
  /** Reads every layer's recurrent state of `slot`, layer after layer ([Σ layerSizes] f32): a prompt-cache snapshot. */
  readRecurrentState(slot: number): Promise<Float32Array>;
  /** Overwrites every layer's recurrent state of `slot` with what `readRecurrentState` returned. */
  writeRecurrentState(slot: number, state: Float32Array): void;
  /** Copies positions 0 … nPositions−1 of every layer from one slot to another (prompt-cache reuse). */
  copyKv(srcSlot: number, dstSlot: number, nPositions: number): void;
  /** Optional: reads positions 0 … nPositions−1 of every layer's K and V of `slot` (prompt-cache persistence). */
  readKv?(slot: number, nPositions: number): Promise<KvRows>;
  /** Optional: writes `rows` (as `readKv` returned them, same element type) into positions 0 … of `slot`. */
  writeKv?(slot: number, rows: KvRows): Promise<void>;
  /** Releases every buffer; the object is unusable afterwards. */
  destroy(): void;
}
