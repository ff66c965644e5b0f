/**
 * The one forward pass (llama2.c `forward()` style), written only against `Ops`: embed → per layer (norm → q,k,v →
 * [q/k norm] → rope → KV store → attention → o → [post-norm] → residual → norm → gate/up → GLU → down → [post-norm] →
 * residual) → final norm → lm head → [soft-cap]. Architecture differences are `ModelConfig` options, never forks.
 * `eval` cuts its tokens into steps of at most `ubatchSize` tokens; every buffer is allocated once, here.
 */

import type { Activation, AttentionParams, FusedMatmulOptions, FusedNorm, Ops, RopeParams, TopK, Weight } from '../backend/ops.js';
import { LlmError, throwIfAborted } from '../errors.js';
import type { ModelConfig } from './config.js';
import type { LogitsWanted, Transformer } from './model.js';

/** Weights of one block; optional ones are null when the architecture or file has none. */
export interface LayerWeights {
  readonly attnNorm: Weight; // [nEmbd]
  readonly wq: Weight; // [nHeads·headDim rows, nEmbd]
  readonly wk: Weight; // [nKvHeads·headDim rows, nEmbd]
  readonly wv: Weight; // [nKvHeads·headDim rows, nEmbd]
  readonly bq: Weight | null; // [nHeads·headDim]
  readonly bk: Weight | null; // [nKvHeads·headDim]
  readonly bv: Weight | null; // [nKvHeads·headDim]
  readonly qNorm: Weight | null; // [headDim]
  readonly kNorm: Weight | null; // [headDim]
  readonly wo: Weight; // [nEmbd rows, nHeads·headDim]
  readonly bo: Weight | null; // [nEmbd]
  readonly postAttnNorm: Weight | null; // [nEmbd]
  readonly ffnNorm: Weight; // [nEmbd]
  readonly gate: Weight; // [ffnDim rows, nEmbd]
  readonly up: Weight; // [ffnDim rows, nEmbd]
  readonly down: Weight; // [nEmbd rows, ffnDim]
  readonly postFfnNorm: Weight | null; // [nEmbd]
}

/** Every weight of a model, as uploaded to one backend. */
export interface ModelWeights {
  readonly tokenEmbd: Weight; // [vocab rows, nEmbd]
  readonly outputNorm: Weight; // [nEmbd]
  /** The lm head: `output.weight`, or `tokenEmbd` itself when tied. */
  readonly output: Weight; // [vocab rows, nEmbd]
  readonly outputBias: Weight | null; // [vocab]
  /** Per-dimension rope frequency divisors (`rope_freqs` / LongRoPE factors), [ropeDims / 2]. */
  readonly ropeFreqFactors: Float32Array | null;
  readonly layers: readonly LayerWeights[];
}

/** Run-time geometry of a loaded model. */
export interface TransformerOptions {
  /** KV cells per slot (positions a sequence can hold). */
  readonly contextLength: number;
  /** Most tokens per step. */
  readonly ubatchSize: number;
  /** Independent sequences. */
  readonly nSlots: number;
}

/** At most this many logit values per step buffer (64 MiB of f32); bigger vocabularies take fewer rows per step. */
const MAX_LOGIT_VALUES = 1 << 24;

/** Per-layer parameters of rope and attention, fixed at load. */
/** A normed projection's fused-op options (the attention sub-block's q, k, v). */
interface ProjectionFusion extends FusedMatmulOptions {
  readonly bias: Weight | null;
  readonly norm: FusedNorm;
}

/** One layer's fused-op options, built once with the model. */
interface LayerFusion {
  readonly ffnNorm: FusedNorm;
  readonly q: ProjectionFusion;
  readonly k: ProjectionFusion;
  readonly v: ProjectionFusion;
  readonly wo: FusedMatmulOptions;
  readonly down: FusedMatmulOptions;
}

interface LayerPlan {
  readonly rope: RopeParams;
  readonly attention: AttentionParams;
}

/** The activations of a step, allocated once at their largest size. */
interface Buffers {
  readonly x: Activation; // [ubatch, nEmbd] residual stream
  readonly xb: Activation; // [ubatch, nEmbd] normalised input of a sub-block
  readonly xb2: Activation; // [ubatch, nEmbd] output of a sub-block
  readonly q: Activation; // [ubatch, nHeads·headDim]
  readonly k: Activation; // [ubatch, nKvHeads·headDim]
  readonly v: Activation; // [ubatch, nKvHeads·headDim]
  readonly att: Activation; // [ubatch, nHeads·headDim] attention output
  readonly gate: Activation; // [ubatch, ffnDim]
  readonly up: Activation; // [ubatch, ffnDim]
  readonly hidden: Activation; // [ubatch, ffnDim] act(gate) · up (own buffer: glu's output may not alias its inputs)
  readonly xLast: Activation; // [1, nEmbd] last row, for 'last' logits
  readonly logits: Activation; // [logitRows, vocab]
}

/** A model on one backend: implements the engine's `Transformer`. */
export class TransformerModel implements Transformer {
  readonly ubatchSize: number;
  readonly contextLength: number;
  readonly nSlots: number;
  private readonly buffers: Buffers;
  private readonly plans: readonly LayerPlan[];
  /** Options of the fused ops per layer and for the output, built once (the decode loop allocates nothing). */
  private readonly fused: readonly LayerFusion[];
  private readonly outputFused: FusedMatmulOptions;
  /** Rows of `buffers.logits` one step may fill. */
  private readonly logitRows: number;
  /** Row of `buffers.logits` holding the last evaluated token's logits, or -1 when none is there. */
  private lastLogitsRow = -1;

  constructor(
    readonly config: ModelConfig,
    private readonly weights: ModelWeights,
    readonly ops: Ops,
    options: TransformerOptions,
  ) {
    const c = config;
    this.contextLength = options.contextLength;
    this.nSlots = options.nSlots;
    this.ubatchSize = Math.max(1, Math.min(options.ubatchSize, options.contextLength));
    this.logitRows = Math.max(1, Math.min(this.ubatchSize, Math.floor(MAX_LOGIT_VALUES / c.vocabSize)));
    const ub = this.ubatchSize;
    const qCols = c.nHeads * c.headDim;
    const kvCols = c.nKvHeads * c.headDim;
    this.buffers = {
      x: ops.createActivation('x', ub, c.embeddingLength),
      xb: ops.createActivation('xb', ub, c.embeddingLength),
      xb2: ops.createActivation('xb2', ub, c.embeddingLength),
      q: ops.createActivation('q', ub, qCols),
      k: ops.createActivation('k', ub, kvCols),
      v: ops.createActivation('v', ub, kvCols),
      att: ops.createActivation('att', ub, qCols),
      gate: ops.createActivation('gate', ub, c.ffnDim),
      up: ops.createActivation('up', ub, c.ffnDim),
      hidden: ops.createActivation('hidden', ub, c.ffnDim),
      xLast: ops.createActivation('x_last', 1, c.embeddingLength),
      logits: ops.createActivation('logits', this.logitRows, c.vocabSize),
    };
    ops.createKvCache({
      nLayers: c.nLayers,
      nSlots: options.nSlots,
      contextLength: options.contextLength,
      nKvHeads: c.nKvHeads,
      headDim: c.headDim,
    });
    this.plans = Array.from({ length: c.nLayers }, (_, il) => planLayer(c, weights.ropeFreqFactors, il));
    this.fused = weights.layers.map((lw) => {
      const attnNorm = { weight: lw.attnNorm, eps: c.normEps };
      return {
        ffnNorm: { weight: lw.ffnNorm, eps: c.normEps },
        q: { bias: lw.bq, norm: attnNorm },
        k: { bias: lw.bk, norm: attnNorm },
        v: { bias: lw.bv, norm: attnNorm },
        wo: { bias: lw.bo, accumulate: true },
        down: { accumulate: true },
      };
    });
    this.outputFused = { bias: weights.outputBias, norm: { weight: weights.outputNorm, eps: c.normEps } };
  }

  async eval(
    tokens: Int32Array,
    startPos: number,
    slot: number,
    options: { logits?: LogitsWanted; signal?: AbortSignal } = {},
  ): Promise<Float32Array | null> {
    const wanted = options.logits ?? 'last';
    this.checkRequest(tokens, startPos, slot);
    const vocab = this.config.vocabSize;
    const step = wanted === 'all' ? this.logitRows : this.ubatchSize;
    const all = wanted === 'all' ? new Float32Array(tokens.length * vocab) : null; // [tokens.length, vocab]
    this.lastLogitsRow = -1;
    for (let off = 0; off < tokens.length; off += step) {
      throwIfAborted(options.signal, 'evaluating tokens');
      const n = Math.min(step, tokens.length - off);
      const isFinal = off + n === tokens.length;
      const mode: LogitsWanted = wanted === 'all' ? 'all' : wanted === 'last' && isFinal ? 'last' : 'none';
      this.forward(tokens.subarray(off, off + n), startPos + off, slot, mode);
      if (all) all.set(await this.ops.read(this.buffers.logits, n), off * vocab);
      if (isFinal && mode !== 'none') this.lastLogitsRow = mode === 'all' ? n - 1 : 0;
    }
    return all;
  }

  async readLogits(): Promise<Float32Array> {
    const row = this.requireLogits();
    const rows = await this.ops.read(this.buffers.logits, row + 1);
    return rows.slice(row * this.config.vocabSize);
  }

  argmax(): Promise<number> {
    return this.ops.argmax(this.buffers.logits, this.requireLogits());
  }

  topK(k: number): Promise<TopK> {
    return this.ops.topK(this.buffers.logits, this.requireLogits(), k);
  }

  copySlot(srcSlot: number, dstSlot: number, nPositions: number): void {
    for (const s of [srcSlot, dstSlot]) this.checkSlot(s);
    if (!(nPositions >= 0 && nPositions <= this.contextLength)) {
      throw new LlmError('invalid-request', `copying KV: ${nPositions} positions do not fit a context of ${this.contextLength}`);
    }
    this.ops.copyKv(srcSlot, dstSlot, nPositions);
  }

  destroy(): void {
    this.ops.destroy();
  }

  /** One step of n ≤ ubatchSize tokens at positions startPos … startPos+n−1. */
  private forward(tokens: Int32Array, startPos: number, slot: number, logits: LogitsWanted): void {
    const { ops, config: c, weights: w, buffers: b } = this;
    const n = tokens.length;
    ops.beginStep({ tokens, startPos, slot });
    ops.embed(b.x, w.tokenEmbd, n); // x [n, nEmbd]
    if (c.scaleEmbeddings) ops.scale(b.x, Math.fround(Math.sqrt(c.embeddingLength)), n);

    for (let il = 0; il < c.nLayers; il++) {
      const lw = w.layers[il];
      const plan = this.plans[il];
      // Attention sub-block. Backends with fused kernels fold the norm into each projection (x stays as is).
      const fu = this.fused[il];
      let isNormed = this.normMatmul(b.q, lw.wq, fu.q, n, false); // q [n, nHeads·headDim]
      isNormed = this.normMatmul(b.k, lw.wk, fu.k, n, isNormed); // k [n, nKvHeads·headDim]
      this.normMatmul(b.v, lw.wv, fu.v, n, isNormed); // v [n, nKvHeads·headDim]
      if (lw.qNorm) ops.rmsNorm(b.q, b.q, lw.qNorm, c.normEps, n, c.headDim); // per head
      if (lw.kNorm) ops.rmsNorm(b.k, b.k, lw.kNorm, c.normEps, n, c.headDim);
      if (!ops.ropeStoreKv?.(il, b.q, b.k, b.v, n, plan.rope)) {
        ops.rope(b.q, n, plan.rope);
        ops.rope(b.k, n, plan.rope);
        ops.storeKv(il, b.k, b.v, n); // cache[slot][il][startPos … startPos+n)
      }
      ops.attention(b.att, b.q, il, n, plan.attention); // att [n, nHeads·headDim]
      if (lw.postAttnNorm || !ops.matmulFused?.(b.x, b.att, lw.wo, n, fu.wo)) {
        ops.matmul(b.xb2, b.att, lw.wo, n, lw.bo); // xb2 [n, nEmbd]
        if (lw.postAttnNorm) ops.rmsNorm(b.xb2, b.xb2, lw.postAttnNorm, c.normEps, n);
        ops.add(b.x, b.x, b.xb2, n); // x += attention
      }
      // Feed-forward sub-block (gated).
      if (!ops.matmulGlu?.(b.hidden, b.x, lw.gate, lw.up, n, c.activation, fu.ffnNorm)) {
        ops.rmsNorm(b.xb, b.x, lw.ffnNorm, c.normEps, n); // xb [n, nEmbd]
        ops.matmul(b.gate, b.xb, lw.gate, n); // gate [n, ffnDim]
        ops.matmul(b.up, b.xb, lw.up, n); // up [n, ffnDim]
        ops.glu(b.hidden, b.gate, b.up, n, c.activation); // hidden = act(gate) · up
      }
      if (lw.postFfnNorm || !ops.matmulFused?.(b.x, b.hidden, lw.down, n, fu.down)) {
        ops.matmul(b.xb2, b.hidden, lw.down, n); // xb2 [n, nEmbd]
        if (lw.postFfnNorm) ops.rmsNorm(b.xb2, b.xb2, lw.postFfnNorm, c.normEps, n);
        ops.add(b.x, b.x, b.xb2, n); // x += ffn
      }
    }

    if (logits !== 'none') {
      // 'last' normalises only the final row (x itself when it is the only row); 'all' every row. logits [rows, vocab]
      const src = logits === 'last' && n > 1 ? b.xLast : b.x;
      const rows = logits === 'last' ? 1 : n;
      if (src === b.xLast) ops.copyRows(b.xLast, b.x, n - 1, 1); // xLast [1, nEmbd]
      if (!ops.matmulFused?.(b.logits, src, w.output, rows, this.outputFused)) {
        ops.rmsNorm(src, src, w.outputNorm, c.normEps, rows);
        ops.matmul(b.logits, src, w.output, rows, w.outputBias);
      }
      if (c.finalSoftcap > 0) ops.softcap(b.logits, c.finalSoftcap, rows);
    }
    ops.endStep();
  }

  /**
   * out = rmsNorm(x)·wᵀ (+ bias) for a projection of the attention sub-block: fused when the backend can, else
   * through xb, normalised once (`isNormed` says it already is). Returns whether xb now holds the normalised x.
   */
  private normMatmul(out: Activation, w: Weight, options: ProjectionFusion, n: number, isNormed: boolean): boolean {
    const { ops, buffers: b } = this;
    if (ops.matmulFused?.(out, b.x, w, n, options)) return isNormed;
    if (!isNormed) ops.rmsNorm(b.xb, b.x, options.norm.weight, options.norm.eps, n); // xb [n, nEmbd]
    ops.matmul(out, b.xb, w, n, options.bias);
    return true;
  }

  private checkRequest(tokens: Int32Array, startPos: number, slot: number): void {
    this.checkSlot(slot);
    if (tokens.length === 0) throw new LlmError('invalid-request', 'evaluating tokens: the token list is empty');
    if (!(Number.isSafeInteger(startPos) && startPos >= 0)) {
      throw new LlmError('invalid-request', `evaluating tokens: start position ${startPos} is not a non-negative integer`);
    }
    if (startPos + tokens.length > this.contextLength) {
      throw new LlmError(
        'context-overflow',
        `evaluating ${tokens.length} tokens at position ${startPos}: the context holds ${this.contextLength} positions; ` +
          'load the model with a larger contextLength or shorten the input',
        { details: { startPos, nTokens: tokens.length, contextLength: this.contextLength } },
      );
    }
    for (let i = 0; i < tokens.length; i++) {
      if (!(tokens[i] >= 0 && tokens[i] < this.config.vocabSize)) {
        throw new LlmError('invalid-request', `evaluating tokens: token ${i} has id ${tokens[i]}, outside the vocabulary (0…${this.config.vocabSize - 1})`, {
          details: { index: i, token: tokens[i], vocabSize: this.config.vocabSize },
        });
      }
    }
  }

  private checkSlot(slot: number): void {
    if (!(Number.isInteger(slot) && slot >= 0 && slot < this.nSlots)) {
      throw new LlmError('invalid-request', `sequence slot ${slot} does not exist (the model was loaded with ${this.nSlots})`, {
        details: { slot, nSlots: this.nSlots },
      });
    }
  }

  private requireLogits(): number {
    if (this.lastLogitsRow < 0) {
      throw new LlmError('invalid-request', "reading logits: the last eval did not keep any (call eval with logits 'last' or 'all')");
    }
    return this.lastLogitsRow;
  }
}

/** Rope and attention parameters of layer `il` (sliding layers may use their own rope base, gemma3). */
function planLayer(c: ModelConfig, freqFactors: Float32Array | null, il: number): LayerPlan {
  const sliding = c.slidingWindow > 0 && c.slidingLayers[il];
  const swaRope = sliding && c.ropeSwa !== null ? c.ropeSwa : null;
  const rope: RopeParams = {
    kind: c.ropeKind,
    headDim: c.headDim,
    nRot: c.ropeDims,
    theta: swaRope ? swaRope.theta : c.ropeTheta,
    freqScale: swaRope ? swaRope.freqScale : c.ropeFreqScale,
    ...(freqFactors ? { freqFactors } : {}),
    ...(c.ropeYarn && !swaRope ? { yarn: c.ropeYarn } : {}),
  };
  const attention: AttentionParams = {
    nHeads: c.nHeads,
    nKvHeads: c.nKvHeads,
    headDim: c.headDim,
    scale: c.attentionScale,
    slidingWindow: sliding ? c.slidingWindow : 0,
    softcap: c.attnSoftcap,
  };
  return { rope, attention };
}
