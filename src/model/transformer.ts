/**
 * The one forward pass (llama2.c `forward()` style), written only against `Ops`: embed → per layer (norm → q,k,v →
 * [q/k norm] → rope → KV store → attention → o → [post-norm] → residual → norm → gate/up → GLU → down → [post-norm] →
 * residual) → final norm → lm head → [soft-cap]. Architecture differences are `ModelConfig` options, never forks.
 * `eval` cuts its tokens into steps of at most `ubatchSize` tokens; every buffer is allocated once, here.
 */

import type { Activation, AttentionParams, GluScratch, Ops, Projection, ResidualOptions, RmsNormWeight, RopeParams, TopK, Weight } from '../backend/ops.js';
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

/** Everything one layer's steps take besides the step's tokens, built once at load (the decode loop allocates nothing). */
interface LayerPlan {
  readonly rope: RopeParams;
  readonly attention: AttentionParams;
  readonly attnNorm: RmsNormWeight;
  /** q, k, v projections of the normalised input. */
  readonly qkv: readonly Projection[];
  /** Output projection → x (bias, post-norm). */
  readonly attnOut: ResidualOptions;
  readonly ffnNorm: RmsNormWeight;
  /** Down projection → x (post-norm). */
  readonly ffnOut: ResidualOptions;
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
  private readonly ffnScratch: GluScratch;
  private readonly outputNorm: RmsNormWeight;
  /** The lm head as a projection of xb into the logits. */
  private readonly outputHead: readonly Projection[];
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
    this.plans = weights.layers.map((lw, il) => planLayer(c, lw, weights.ropeFreqFactors, this.buffers, il));
    this.ffnScratch = { normed: this.buffers.xb, gate: this.buffers.gate, up: this.buffers.up };
    this.outputNorm = { weight: weights.outputNorm, eps: c.normEps };
    this.outputHead = [{ out: this.buffers.logits, weight: weights.output, bias: weights.outputBias }];
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
      const p = this.plans[il];
      // Attention sub-block.
      ops.normMatmul(b.xb, b.x, p.attnNorm, p.qkv, n); // q [n, nHeads·headDim], k and v [n, nKvHeads·headDim]
      if (lw.qNorm) ops.rmsNorm(b.q, b.q, lw.qNorm, c.normEps, n, c.headDim); // per head
      if (lw.kNorm) ops.rmsNorm(b.k, b.k, lw.kNorm, c.normEps, n, c.headDim);
      ops.ropeStoreKv(il, b.q, b.k, b.v, n, p.rope); // cache[slot][il][startPos … startPos+n) = k, v
      ops.attention(b.att, b.q, il, n, p.attention); // att [n, nHeads·headDim]
      ops.matmulResidual(b.x, b.att, lw.wo, n, p.attnOut); // x [n, nEmbd] += (post-norm) att · woᵀ
      // Feed-forward sub-block (gated).
      ops.gatedFfn(b.hidden, b.x, p.ffnNorm, lw.gate, lw.up, n, c.activation, this.ffnScratch); // hidden [n, ffnDim]
      ops.matmulResidual(b.x, b.hidden, lw.down, n, p.ffnOut); // x [n, nEmbd] += (post-norm) hidden · downᵀ
    }

    if (logits !== 'none') {
      // 'last' projects only the final row (x itself when it is the only row); 'all' every row. logits [rows, vocab]
      const src = logits === 'last' && n > 1 ? b.xLast : b.x;
      const rows = logits === 'last' ? 1 : n;
      if (src === b.xLast) ops.copyRows(b.xLast, b.x, n - 1, 1); // xLast [1, nEmbd]
      ops.normMatmul(b.xb, src, this.outputNorm, this.outputHead, rows); // logits [rows, vocab]
      if (c.finalSoftcap > 0) ops.softcap(b.logits, c.finalSoftcap, rows);
    }
    ops.endStep();
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

/** The plan of layer `il`: rope and attention parameters (sliding layers may use their own rope base, gemma3) and its steps' weights. */
function planLayer(c: ModelConfig, lw: LayerWeights, freqFactors: Float32Array | null, b: Buffers, il: number): LayerPlan {
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
  const norm = (weight: Weight | null): RmsNormWeight | null => (weight ? { weight, eps: c.normEps } : null);
  return {
    rope,
    attention,
    attnNorm: { weight: lw.attnNorm, eps: c.normEps },
    qkv: [
      { out: b.q, weight: lw.wq, bias: lw.bq },
      { out: b.k, weight: lw.wk, bias: lw.bk },
      { out: b.v, weight: lw.wv, bias: lw.bv },
    ],
    attnOut: { bias: lw.bo, postNorm: norm(lw.postAttnNorm), scratch: b.xb2 },
    ffnNorm: { weight: lw.ffnNorm, eps: c.normEps },
    ffnOut: { bias: null, postNorm: norm(lw.postFfnNorm), scratch: b.xb2 },
  };
}
