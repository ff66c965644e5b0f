/**
 * The one forward pass (llama2.c `forward()` style), written only against `Ops`: embed → per layer (norm → q,k,v →
 * [q/k norm] → rope → KV store → attention → o → [post-norm] → residual → norm → gate/up → GLU → down → [post-norm] →
 * residual) → final norm → lm head → [soft-cap]. Architecture differences are `ModelConfig` options, never forks;
 * per-layer geometry comes from the layer records (`layer-spec.ts`), each compound step is one `Ops` call.
 * `eval` cuts its tokens into steps of at most `ubatchSize` tokens; every buffer is allocated once, here.
 */

import type {
  Activation,
  AttentionParams,
  GluScratch,
  MoeStep,
  Ops,
  Projection,
  ResidualOptions,
  RmsNormWeight,
  RopeParams,
  TopK,
  Weight,
} from '../backend/ops.js';
import { LlmError, throwIfAborted } from '../errors.js';
import type { ModelConfig } from './config.js';
import { describeLayers, type LayerSpec, type MoeLayerSpec } from './layer-spec.js';
import { activationShapes, logitRowsOf, type RunShape, widthKey } from './run-shape.js';
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
  /** The dense FFN; null on a mixture-of-experts layer. */
  readonly ffn: DenseFfnWeights | null;
  /** The experts of a mixture-of-experts layer, or null. */
  readonly moe: MoeWeights | null;
  readonly postFfnNorm: Weight | null; // [nEmbd]
}

/** A dense gated FFN. */
export interface DenseFfnWeights {
  readonly gate: Weight; // [ffnDim rows, nEmbd]
  readonly up: Weight; // [ffnDim rows, nEmbd]
  readonly down: Weight; // [nEmbd rows, ffnDim]
}

/** The experts of a MoE FFN: 3-D stacks uploaded as one weight each (expert e owns rows e·rows … (e+1)·rows). */
export interface MoeWeights {
  readonly router: Weight; // [nExperts rows, nEmbd]
  readonly gate: Weight; // [nExperts·expertDim rows, nEmbd]
  readonly up: Weight; // [nExperts·expertDim rows, nEmbd]
  readonly down: Weight; // [nExperts·nEmbd rows, expertDim]
  /** Selection bias of the router probabilities (`exp_probs_b`) [nExperts], or null. */
  readonly selectionBias: Weight | null;
  /** The shared expert (its sigmoid gate `gateInp` [nEmbd] when the architecture has one), or null. */
  readonly shared: (DenseFfnWeights & { readonly gateInp: Weight | null }) | null;
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

/** Everything one layer's steps take besides the step's tokens, built once at load (the decode loop allocates nothing). */
interface LayerPlan {
  readonly spec: LayerSpec;
  readonly rope: RopeParams | null;
  readonly attention: AttentionParams;
  readonly attnNorm: RmsNormWeight;
  /** q, k, v projections of the normalised input. */
  readonly qkv: readonly Projection[];
  readonly q: Activation; // [ubatch, nHeads·headDim] of this layer
  readonly att: Activation; // [ubatch, nHeads·headDim] attention output
  /** Output projection → x (bias, post-norm). */
  readonly attnOut: ResidualOptions;
  readonly ffnNorm: RmsNormWeight;
  /** The dense FFN's weights, or null on a MoE layer. */
  readonly dense: DenseFfnWeights | null;
  /** The MoE FFN step, or null on a dense layer. */
  readonly moe: MoeStep | null;
  readonly ffnScratch: GluScratch; // normed [ubatch, nEmbd], gate and up [ubatch, ffnDim]
  readonly hidden: Activation; // [ubatch, ffnDim] act(gate) · up (own buffer: glu's output may not alias its inputs)
  /** Down projection → x (post-norm). */
  readonly ffnOut: ResidualOptions;
}

/** The activations shared by every layer, allocated once at their largest size (see `activationShapes`). */
interface Buffers {
  readonly x: Activation; // [ubatch, nEmbd] residual stream
  readonly xb: Activation; // [ubatch, nEmbd] normalised input of a sub-block
  readonly xb2: Activation; // [ubatch, nEmbd] output of a sub-block
  readonly k: Activation; // [ubatch, nKvHeads·headDim]
  readonly v: Activation; // [ubatch, nKvHeads·headDim]
  readonly xLast: Activation; // [1, nEmbd] last row, for 'last' logits
  readonly logits: Activation; // [logitRows, vocab]
}

/** The activations of a model, by `ActivationShape.key`. */
type ActivationMap = ReadonlyMap<string, Activation>;

/** A model on one backend: implements the engine's `Transformer`. */
export class TransformerModel implements Transformer {
  readonly ubatchSize: number;
  readonly contextLength: number;
  readonly nSlots: number;
  private readonly buffers: Buffers;
  private readonly plans: readonly LayerPlan[];
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
    options: RunShape,
  ) {
    const c = config;
    this.contextLength = options.contextLength;
    this.nSlots = options.nSlots;
    this.ubatchSize = Math.max(1, Math.min(options.ubatchSize, options.contextLength));
    this.logitRows = logitRowsOf(c.vocabSize, this.ubatchSize);
    const acts: ActivationMap = new Map(
      activationShapes(c, this.ubatchSize).map((a) => [a.key, ops.createActivation(a.label, a.rows, a.cols)]),
    );
    const act = (key: string): Activation => acts.get(key)!;
    this.buffers = {
      x: act('x'),
      xb: act('xb'),
      xb2: act('xb2'),
      k: act('k'),
      v: act('v'),
      xLast: act('x_last'),
      logits: act('logits'),
    };
    ops.createKvCache({
      nLayers: c.nLayers,
      nSlots: options.nSlots,
      contextLength: options.contextLength,
      nKvHeads: c.nKvHeads,
      headDim: c.headDim,
    });
    this.plans = describeLayers(c).map((spec, il) =>
      planLayer(c, spec, weights.layers[il], weights.ropeFreqFactors, this.buffers, acts),
    );
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
      throw new LlmError(
        'invalid-request',
        `copying KV: ${nPositions} positions do not fit a context of ${this.contextLength}`,
      );
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

    for (let il = 0; il < this.plans.length; il++) {
      const lw = w.layers[il];
      const p = this.plans[il];
      const headDim = p.spec.headDim;
      // Attention sub-block.
      ops.normMatmul(b.xb, b.x, p.attnNorm, p.qkv, n); // q [n, nHeads·headDim], k and v [n, nKvHeads·headDim]
      const qkGroup = c.qkNormScope === 'full' ? undefined : headDim; // per head, or the whole row (olmoe)
      if (lw.qNorm) ops.rmsNorm(p.q, p.q, lw.qNorm, c.normEps, n, qkGroup);
      if (lw.kNorm) ops.rmsNorm(b.k, b.k, lw.kNorm, c.normEps, n, qkGroup);
      if (p.rope)
        ops.ropeStoreKv(il, p.q, b.k, b.v, n, p.rope); // cache[slot][il][startPos … startPos+n) = k, v
      else ops.storeKv(il, b.k, b.v, n); // NoPE layer: positions only through the causal mask
      ops.attention(p.att, p.q, il, n, p.attention); // att [n, nHeads·headDim]
      ops.matmulResidual(b.x, p.att, lw.wo, n, p.attnOut); // x [n, nEmbd] += (post-norm) att · woᵀ
      // Feed-forward sub-block (gated; or a mixture of experts).
      if (p.moe)
        ops.moeFfn(b.x, p.ffnNorm, p.moe, n); // x [n, nEmbd] += Σ_k w_k · expert_k(norm(x)) (+ shared)
      else if (p.dense) {
        ops.gatedFfn(p.hidden, b.x, p.ffnNorm, p.dense.gate, p.dense.up, n, c.activation, p.ffnScratch); // [n, ffnDim]
        ops.matmulResidual(b.x, p.hidden, p.dense.down, n, p.ffnOut); // x [n, nEmbd] += (post-norm) hidden · downᵀ
      }
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
      throw new LlmError(
        'invalid-request',
        `evaluating tokens: start position ${startPos} is not a non-negative integer`,
      );
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
        throw new LlmError(
          'invalid-request',
          `evaluating tokens: token ${i} has id ${tokens[i]}, outside the vocabulary (0…${this.config.vocabSize - 1})`,
          {
            details: { index: i, token: tokens[i], vocabSize: this.config.vocabSize },
          },
        );
      }
    }
  }

  private checkSlot(slot: number): void {
    if (!(Number.isInteger(slot) && slot >= 0 && slot < this.nSlots)) {
      throw new LlmError(
        'invalid-request',
        `sequence slot ${slot} does not exist (the model was loaded with ${this.nSlots})`,
        {
          details: { slot, nSlots: this.nSlots },
        },
      );
    }
  }

  private requireLogits(): number {
    if (this.lastLogitsRow < 0) {
      throw new LlmError(
        'invalid-request',
        "reading logits: the last eval did not keep any (call eval with logits 'last' or 'all')",
      );
    }
    return this.lastLogitsRow;
  }
}

/** The plan of one layer: its rope and attention parameters, its steps' weights and the buffers of its widths. */
function planLayer(
  c: ModelConfig,
  spec: LayerSpec,
  lw: LayerWeights,
  freqFactors: Float32Array | null,
  b: Buffers,
  acts: ActivationMap,
): LayerPlan {
  const widths = { get: (label: string, cols: number): Activation => acts.get(widthKey(label, cols))! };
  const rope: RopeParams | null = spec.rope && {
    kind: c.ropeKind,
    headDim: spec.headDim,
    nRot: c.ropeDims,
    theta: spec.rope.theta,
    freqScale: spec.rope.freqScale,
    ...(freqFactors ? { freqFactors } : {}),
    ...(spec.rope.yarn ? { yarn: spec.rope.yarn } : {}),
  };
  const attention: AttentionParams = {
    nHeads: spec.nHeads,
    nKvHeads: spec.nKvHeads,
    headDim: spec.headDim,
    scale: c.attentionScale,
    slidingWindow: spec.slidingWindow,
    softcap: c.attnSoftcap,
  };
  const qCols = spec.nHeads * spec.headDim;
  const q = widths.get('q', qCols);
  const norm = (weight: Weight | null): RmsNormWeight | null => (weight ? { weight, eps: c.normEps } : null);
  return {
    spec,
    rope,
    attention,
    attnNorm: { weight: lw.attnNorm, eps: c.normEps },
    qkv: [
      { out: q, weight: lw.wq, bias: lw.bq },
      { out: b.k, weight: lw.wk, bias: lw.bk },
      { out: b.v, weight: lw.wv, bias: lw.bv },
    ],
    q,
    att: widths.get('att', qCols),
    attnOut: { bias: lw.bo, postNorm: norm(lw.postAttnNorm), scratch: b.xb2 },
    ffnNorm: { weight: lw.ffnNorm, eps: c.normEps },
    dense: lw.ffn,
    moe: spec.moe && lw.moe ? planMoe(c, spec.moe, lw.moe, b, widths.get) : null,
    ffnScratch: { normed: b.xb, gate: widths.get('gate', spec.ffnDim), up: widths.get('up', spec.ffnDim) },
    hidden: widths.get('hidden', spec.ffnDim), // absent (undefined) on a MoE layer without a shared expert
    ffnOut: { bias: null, postNorm: norm(lw.postFfnNorm), scratch: b.xb2 },
  };
}

/** The MoE step of one layer: its weights, routing and the buffers of its widths (see `activationShapes`). */
function planMoe(
  c: ModelConfig,
  m: MoeLayerSpec,
  w: MoeWeights,
  b: Buffers,
  get: (label: string, cols: number) => Activation,
): MoeStep {
  const sh = w.shared;
  return {
    router: w.router,
    gate: w.gate,
    up: w.up,
    down: w.down,
    nExperts: m.nExperts,
    route: { gating: m.gating, normWeights: m.normWeights, scale: m.weightsScale, selectionBias: w.selectionBias },
    activation: c.activation,
    shared: sh && {
      gate: sh.gate,
      up: sh.up,
      down: sh.down,
      gateInp: sh.gateInp,
      scratch: {
        gate: get('gate', sh.gate.nRows),
        up: get('up', sh.gate.nRows),
        hidden: get('hidden', sh.gate.nRows),
        logit: get('moe_shared_logit', 1),
      },
    },
    scratch: {
      normed: b.xb,
      logits: get('moe_logits', m.nExperts),
      ids: get('moe_ids', m.nUsed),
      weights: get('moe_weights', m.nUsed),
      gate: get('moe_gate', m.expertDim),
      up: get('moe_up', m.expertDim),
      hidden: get('moe_hidden', m.expertDim),
      down: get('moe_down', c.embeddingLength),
      out: b.xb2,
    },
  };
}
