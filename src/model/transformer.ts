/**
 * The one forward pass (llama2.c `forward()` style), written only against `Ops`: embed → per layer (norm → q,k,v →
 * [q/k norm] → rope → KV store → attention → o → [post-norm] → residual → norm → gate/up → GLU → down → [post-norm] →
 * residual) → final norm → lm head → [soft-cap]. Architecture differences are `ModelConfig` options, never forks;
 * per-layer geometry comes from the layer records (`layer-spec.ts`), each compound step is one `Ops` call.
 * `eval` cuts its tokens into steps of at most `ubatchSize` tokens; every buffer is allocated once, here.
 */

import { checkRequest, checkRows, checkSlot, logitsRowOf } from './eval-checks.js';
import type { Activation, AttentionParams, KvCacheSpec, Ops, Projection, RmsNormWeight, TopK } from '../backend/ops.js';
import { kvCacheBytes } from '../backend/kv-rows.js';
import { LlmError, throwIfAborted } from '../errors.js';
import type { ModelConfig } from './config.js';
import { attentionTemperature, temperatureRun } from './attention-temperature.js';
import { deltaNetBlock } from './delta-net-layer.js';
import { mamba2Block } from './mamba2-layer.js';
import { mlpBlock } from './mlp-layer.js';
import { describeLayers, kvLayersOf, recurrentStateSize } from './layer-spec.js';
import {
  type ActivationMap,
  type AttentionLayerPlan,
  type LayerPlan,
  planLayer,
  type ShortConvLayerPlan,
} from './layer-plan.js';
import type { ModelWeights } from './model-weights.js';
import { PerLayerInput } from './per-layer-input.js';
import { type AltUp, checkLazyParts, type LazyModelParts, type RopeStreams } from './lazy-model-parts.js';
import { activationShapes, logitRowsOf, type RunShape, widthKey } from './run-shape.js';
import type { EmbeddingsEvalOptions, KvCacheInfo, LogitsWanted, SequenceToken, Transformer } from './model.js';
import { checkEmbeddingRows, checkImageGrid, type EmbeddingInput, splitDeepstack } from './embedding-input.js';
import { addDeepstack, setInputRows } from './step-input.js';
import type { RankHead } from './pooling.js';

/** The activations shared by every layer, allocated once at their largest size (see `activationShapes`). */
interface Buffers {
  readonly x: Activation; // [ubatch, nEmbd] residual stream
  readonly xb: Activation; // [ubatch, nEmbd] normalised input of a sub-block
  readonly xb2: Activation; // [ubatch, nEmbd] output of a sub-block
  readonly xLast: Activation; // [1, nEmbd] last row, for 'last' logits
  readonly logits: Activation; // [logitRows, vocab]
}

/** A model on one backend: implements the engine's `Transformer`. */
export class TransformerModel implements Transformer {
  readonly ubatchSize: number;
  readonly contextLength: number;
  readonly nSlots: number;
  readonly rankHead: RankHead | null;
  readonly kvCache: KvCacheInfo;
  readonly hasRecurrentState: boolean;
  readonly maxSequenceRows: number;
  private readonly buffers: Buffers;
  private readonly plans: readonly LayerPlan[];
  private readonly outputNorm: RmsNormWeight;
  private readonly perLayerInput: PerLayerInput | null;
  private readonly altUp: AltUp | null;
  /** The lm head as a projection of xb into the logits. */
  private readonly outputHead: readonly Projection[];
  /** Rows of `buffers.logits` one step may fill. */
  private readonly logitRows: number;
  /** Row of `buffers.logits` holding the last evaluated token's logits, or -1 when none is there. */
  private lastLogitsRow = -1;
  /** Rows of `buffers.logits` the last `evalRows` filled (0 after `eval`). */
  private sequenceRows = 0;
  /** The embedding rows `evalEmbeddings` is running (row `offset` is the current step's first); null for tokens. */
  private input: EmbeddingInput | null = null;
  /** True while `evalChained` runs: the step's token is already on the backend (`StepBatch.tokensOnDevice`). */
  private chained = false;
  /** [1] placeholder id of a chained step (the real one is in the backend's token input); reused per token. */
  private readonly chainedToken = new Int32Array(1);
  /** Rope positions after images per slot (multi-stream rope models only); `evalRows`' streams per row. */
  readonly ropeStreams: RopeStreams | null;
  private rowStreams: readonly (Int32Array | undefined)[] = [];
  /** [k·ubatch, nEmbd] the step's rows of the k deepstack blocks (qwen3vl: `step-input.ts`), else null. */
  private readonly deepstackRows: Activation | null;

  constructor(
    readonly config: ModelConfig,
    private readonly weights: ModelWeights,
    readonly ops: Ops,
    options: RunShape,
    lazy: LazyModelParts = {},
  ) {
    const c = config;
    this.contextLength = options.contextLength;
    this.nSlots = options.nSlots;
    this.rankHead = weights.rankHead ?? null;
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
      xLast: act('x_last'),
      logits: act('logits'),
    };
    const layers = describeLayers(c);
    const kvSpec: KvCacheSpec = {
      nSlots: options.nSlots,
      contextLength: options.contextLength,
      layers: kvLayersOf(layers),
      ...(options.kvType ? { kvType: options.kvType } : {}),
    };
    const kvType = ops.createKvCache(kvSpec);
    this.kvCache = { type: kvType, bytes: kvCacheBytes(kvSpec, kvType) };
    const stateSizes = layers.map((spec) => recurrentStateSize(spec, c.embeddingLength));
    this.hasRecurrentState = stateSizes.some((size) => size > 0);
    if (this.hasRecurrentState) ops.createRecurrentState({ nSlots: options.nSlots, layerSizes: stateSizes });
    // Several sequences per step (n choices) need one-row buffers per attention width, and recurrent layers a backend
    // that advances each row's own state (`Ops.recurrentRows`); otherwise the model takes one row at a time.
    const rowsOk = this.nSlots > 1 && (!this.hasRecurrentState || ops.recurrentRows === true);
    this.maxSequenceRows = rowsOk ? Math.min(this.nSlots, this.logitRows) : 0;
    const rowBuffers = new Map<string, Activation>(); // one-row buffers by label and width
    const row = (label: string, cols: number): Activation => {
      const key = widthKey(label, cols);
      if (!rowBuffers.has(key)) rowBuffers.set(key, ops.createActivation(`${label}_row`, 1, cols));
      return rowBuffers.get(key)!;
    };
    this.plans = layers.map((spec, il) => {
      const seq =
        this.maxSequenceRows > 1 && spec.kind === 'attention'
          ? {
              q: row('q', spec.nHeads * spec.headDim),
              k: row('k', spec.nKvHeads * spec.headDim),
              v: row('v', spec.nKvHeads * spec.headDim),
              att: row('att', spec.nHeads * spec.headDim),
            }
          : null;
      return planLayer(c, il, spec, weights.layers[il], weights.ropeFreqFactors, acts, seq);
    });
    this.outputNorm = { weight: weights.outputNorm, eps: c.normEps };
    this.perLayerInput = weights.perLayer && new PerLayerInput(weights.perLayer, c.normEps, c.embeddingLength, act);
    this.altUp = weights.altUp && lazy.AltUp ? new lazy.AltUp(c, weights.altUp, act, this.perLayerInput) : null;
    this.outputHead = [{ out: this.buffers.logits, weight: weights.output, bias: weights.outputBias }];
    this.ropeStreams = checkLazyParts(c, !!weights.altUp, lazy);
    this.deepstackRows = c.deepstackLayers
      ? ops.createActivation('deepstack', this.ubatchSize * c.deepstackLayers, c.embeddingLength)
      : null;
  }

  async eval(
    tokens: Int32Array,
    startPos: number,
    slot: number,
    options: { logits?: LogitsWanted; signal?: AbortSignal } = {},
  ): Promise<Float32Array | null> {
    checkRequest(this, tokens, startPos, slot);
    return this.evalSteps(tokens, startPos, slot, options);
  }

  async evalEmbeddings(
    rows: Float32Array,
    startPos: number,
    slot: number,
    options: EmbeddingsEvalOptions = {},
  ): Promise<Float32Array | null> {
    const nonCausal = options.nonCausal === true;
    const oneStep = options.logits === 'all' ? this.logitRows : this.ubatchSize; // rows a non-causal chunk may hold
    const n = checkEmbeddingRows(rows, this.config, nonCausal ? oneStep : 0);
    // [n] token ids the step carries: 0, the padding token whose per-layer row gemma4/3n use for embeddings
    const placeholders = new Int32Array(n);
    checkRequest(this, placeholders, startPos, slot);
    if (options.grid) checkImageGrid(options.grid, n);
    const { main, blocks } = splitDeepstack(rows, this.config.embeddingLength, this.config.deepstackLayers ?? 0);
    this.input = {
      rows: main,
      causal: !nonCausal,
      offset: 0,
      deepstack: blocks,
      ...(options.grid && { grid: options.grid }),
    };
    try {
      const out = await this.evalSteps(placeholders, startPos, slot, options);
      this.ropeStreams?.addImage(slot, startPos, n, options.grid);
      return out;
    } finally {
      this.input = null;
    }
  }

  /** `eval`'s steps over checked tokens (placeholders when `input` holds embedding rows). */
  private async evalSteps(
    tokens: Int32Array,
    startPos: number,
    slot: number,
    options: { logits?: LogitsWanted; signal?: AbortSignal },
  ): Promise<Float32Array | null> {
    const wanted = options.logits ?? 'last';
    const vocab = this.config.vocabSize;
    const step = wanted === 'all' ? this.logitRows : this.ubatchSize;
    const all = wanted === 'all' ? new Float32Array(tokens.length * vocab) : null; // [tokens.length, vocab]
    this.lastLogitsRow = -1;
    this.sequenceRows = 0;
    this.ropeStreams?.truncate(slot, startPos); // the slot's KV from startPos on is rewritten
    for (let off = 0, n = 0; off < tokens.length; off += n) {
      throwIfAborted(options.signal, 'evaluating tokens');
      n = Math.min(step, tokens.length - off, temperatureRun(this.config, startPos + off));
      const isFinal = off + n === tokens.length;
      const mode: LogitsWanted = wanted === 'all' ? 'all' : wanted === 'last' && isFinal ? 'last' : 'none';
      if (this.input) this.input.offset = off;
      this.forward(tokens.subarray(off, off + n), startPos + off, slot, mode, null);
      if (all) all.set(await this.ops.read(this.buffers.logits, n), off * vocab);
      if (isFinal && mode !== 'none') this.lastLogitsRow = mode === 'all' ? n - 1 : 0;
    }
    return all;
  }

  /**
   * Runs `tokens` from position 0 of `slot` (its KV is overwritten) and returns the final hidden states after the
   * output norm, [tokens.length, nEmbd] row-major: what llama.cpp pools into embeddings (`t_embd`). No logits.
   */
  async hiddenStates(tokens: Int32Array, slot: number, options: { signal?: AbortSignal } = {}): Promise<Float32Array> {
    checkRequest(this, tokens, 0, slot);
    if (!this.config.causalAttention && tokens.length > this.ubatchSize) {
      throw new LlmError(
        'invalid-request',
        `computing embeddings: ${tokens.length} tokens do not fit one step of ${this.ubatchSize}; a model with ` +
          'non-causal attention sees a sequence whole — load it with a larger ubatchSize',
        { details: { tokens: tokens.length, ubatchSize: this.ubatchSize } },
      );
    }
    const nEmbd = this.config.embeddingLength;
    const out = new Float32Array(tokens.length * nEmbd); // [tokens.length, nEmbd]
    this.lastLogitsRow = -1;
    for (let off = 0; off < tokens.length; off += this.ubatchSize) {
      throwIfAborted(options.signal, 'computing embeddings');
      const n = Math.min(this.ubatchSize, tokens.length - off);
      this.forward(tokens.subarray(off, off + n), off, slot, 'hidden', null);
      out.set(await this.ops.read(this.buffers.xb, n), off * nEmbd); // xb [n, nEmbd] = outputNorm(x)
    }
    return out;
  }

  async evalRows(rows: readonly SequenceToken[], signal?: AbortSignal): Promise<void> {
    throwIfAborted(signal, 'evaluating sequences');
    checkRows(this, rows);
    const tokens = Int32Array.from(rows, (r) => r.token); // [rows.length]
    this.lastLogitsRow = -1;
    this.sequenceRows = 0;
    this.rowStreams = this.ropeStreams?.rowPositions(rows) ?? []; // [4, 1] per row after an image (M-RoPE)
    this.forward(tokens, rows[0].pos, rows[0].slot, 'all', rows);
    this.sequenceRows = rows.length;
    this.lastLogitsRow = rows.length - 1;
  }

  async readLogits(row?: number): Promise<Float32Array> {
    const r = logitsRowOf(row, this.lastLogitsRow, this.sequenceRows);
    const rows = await this.ops.read(this.buffers.logits, r + 1);
    return rows.slice(r * this.config.vocabSize);
  }

  argmax(row?: number): Promise<number> {
    return this.ops.argmax(this.buffers.logits, logitsRowOf(row, this.lastLogitsRow, this.sequenceRows));
  }

  topK(k: number, row?: number): Promise<TopK> {
    return this.ops.topK(this.buffers.logits, logitsRowOf(row, this.lastLogitsRow, this.sequenceRows), k);
  }

  async prepareKernels(tokens: Int32Array, signal?: AbortSignal): Promise<void> {
    const prepare = this.ops.preparePipelines?.bind(this.ops);
    if (!prepare) return;
    // Kernel variants follow the step's rows (attention tiles) and the cached length (split-K), so the recorded steps
    // are prompts of 2, 4, … ubatchSize tokens and decode steps at the start and the end of the context.
    const ids = new Int32Array(Math.min(this.ubatchSize, this.contextLength)).fill(tokens[0] ?? 0); // placeholders
    await prepare(async () => {
      for (let n = Math.min(2, ids.length); ; n = Math.min(2 * n, ids.length)) {
        await this.eval(ids.subarray(0, n), 0, 0, { logits: 'last', signal });
        if (n === ids.length) break;
      }
      for (const pos of new Set([Math.min(1, this.contextLength - 1), this.contextLength - 1])) {
        await this.eval(ids.subarray(0, 1), pos, 0, { signal });
      }
      await this.argmax(); // greedy and pipelined decode
      await this.topK(Math.min(40, this.config.vocabSize)); // seeded sampling's default route
    });
  }

  get canChainTokens(): boolean {
    return this.ops.argmaxToInput !== undefined; // recurrent state too: engine/pipelined-decode.ts records its step
  }

  argmaxToInput(): Promise<number> {
    if (!this.ops.argmaxToInput) throw new LlmError('invalid-request', `${this.ops.name}: no device-side token input`);
    return this.ops.argmaxToInput(this.buffers.logits, logitsRowOf(undefined, this.lastLogitsRow, this.sequenceRows));
  }

  async evalChained(startPos: number, slot: number, signal?: AbortSignal): Promise<void> {
    const token = this.chainedToken;
    checkRequest(this, token, startPos, slot);
    throwIfAborted(signal, 'evaluating tokens');
    this.chained = true;
    try {
      await this.evalSteps(token, startPos, slot, { logits: 'last', signal });
    } finally {
      this.chained = false;
    }
  }

  copySlot(srcSlot: number, dstSlot: number, nPositions: number): void {
    for (const s of [srcSlot, dstSlot]) checkSlot(this, s);
    if (!(nPositions >= 0 && nPositions <= this.contextLength)) {
      throw new LlmError(
        'invalid-request',
        `copying KV: ${nPositions} positions do not fit a context of ${this.contextLength}`,
      );
    }
    this.ops.copyKv(srcSlot, dstSlot, nPositions);
    this.ropeStreams?.copy(srcSlot, dstSlot, nPositions);
    if (this.hasRecurrentState) this.ops.copyRecurrentState(srcSlot, dstSlot); // the state at the source's end
  }

  readState(slot: number): Promise<Float32Array | null> {
    checkSlot(this, slot);
    return this.hasRecurrentState ? this.ops.readRecurrentState(slot) : Promise.resolve(null);
  }

  writeState(slot: number, state: Float32Array): void {
    checkSlot(this, slot);
    if (this.hasRecurrentState) this.ops.writeRecurrentState(slot, state);
  }

  async shiftContext(slot: number, nKeep: number, nDiscard: number, nPositions: number): Promise<void> {
    checkSlot(this, slot);
    const ropes = this.plans.map((p) => (p.kind === 'attention' ? p.rope : null)); // recurrent layers hold no KV
    await this.ops.shiftKv(slot, { nKeep, nDiscard, nPositions, ropes });
  }

  destroy(): void {
    this.ops.destroy();
  }

  /**
   * One step of n ≤ ubatchSize tokens at positions startPos … startPos+n−1 of `slot`, or, with `rows`, one token
   * per sequence (row i at rows[i].pos of rows[i].slot).
   */
  private forward(
    tokens: Int32Array,
    startPos: number,
    slot: number,
    logits: LogitsWanted | 'hidden',
    rows: readonly SequenceToken[] | null,
  ): void {
    const { ops, config: c, weights: w, buffers: b } = this;
    const n = tokens.length;
    const positions = rows ? undefined : this.ropeStreams?.step(slot, startPos, n, this.input); // [4, n] M-RoPE streams
    const batch = { tokens, startPos, slot, ...(positions && { positions }), ...(rows && { sequences: rows }) };
    ops.beginStep(this.chained ? { ...batch, tokensOnDevice: true } : batch);
    if (this.input) setInputRows(ops, b.x, this.deepstackRows, this.input, c.embeddingLength, n);
    else {
      ops.embed(b.x, w.tokenEmbd, n); // x [n, nEmbd]
      if (c.embeddingScale !== 1) ops.scale(b.x, c.embeddingScale, n);
    }
    this.perLayerInput?.project(ops, b.x, n); // every layer's per-layer input [n, nPL] (gemma4)
    this.altUp?.stack(ops, b.x, n); // the AltUp streams (gemma3n)

    for (let il = 0; il < this.plans.length; il++) {
      const p = this.plans[il];
      const alt = p.kind === 'attention' ? this.altUp : null; // x = the active stream's prediction; LAuReL
      alt?.predict(ops, il, b.x, n, p.kind === 'attention' ? p.attnNorm : null);
      if (p.kind === 'shortconv') this.shortConvBlock(p, il, n);
      else if (p.kind === 'deltanet') deltaNetBlock(ops, p, il, n, b.x, b.xb, c.normEps, p.mixerOut);
      else if (p.kind === 'mamba2') mamba2Block(ops, p, il, n, b.x, b.xb, c.normEps, p.mixerOut);
      else if (p.kind === 'mlp') mlpBlock(ops, p, n, b.x, b.xb);
      else this.attentionBlock(p, il, n, startPos, rows);
      alt?.laurelAdd(ops, b.x, n);
      // Feed-forward sub-block (gated; or a mixture of experts).
      if (p.moe && p.ffnNorm)
        ops.moeFfn(b.x, p.ffnNorm, p.moe, n); // x [n, nEmbd] += Σ_k w_k · expert_k(norm(x))
      else if (p.gate && p.up && p.down) {
        if (!alt?.sparseGate(ops, il, p.hidden, b.x, p.ffnNorm, p.gate, p.up, p.ffnScratch, n))
          ops.gatedFfn(p.hidden, b.x, p.ffnNorm, p.gate, p.up, n, c.activation, p.ffnScratch); // hidden [n, ffnDim]
        ops.matmulResidual(b.x, p.hidden, p.down, n, p.ffnOut); // x [n, nEmbd] += (post-norm) hidden · downᵀ
      }
      if (alt && p.kind === 'attention') alt.correct(ops, il, b.x, n, p.w.perLayer);
      else if (p.kind === 'attention' && p.w.perLayer)
        this.perLayerInput?.apply(ops, il, b.x, n, p.w.perLayer, p.perLayerOut);
      if (p.kind === 'attention' && p.w.outScale !== 1) ops.scale(b.x, p.w.outScale, n);
      if (this.input?.deepstack?.[il] && this.deepstackRows) addDeepstack(ops, b.x, this.deepstackRows, il, n); // qwen3vl
    }

    this.altUp?.merge(ops, b.x, n); // x [n, nEmbd] from the AltUp streams

    if (logits === 'hidden') {
      ops.rmsNorm(b.xb, b.x, w.outputNorm, c.normEps, n); // xb [n, nEmbd]: the hidden states embeddings pool
    } else if (logits !== 'none') {
      // 'last' projects only the final row (x itself when it is the only row); 'all' every row. logits [rows, vocab]
      const src = logits === 'last' && n > 1 ? b.xLast : b.x;
      const rows = logits === 'last' ? 1 : n;
      if (src === b.xLast) ops.copyRows(b.xLast, b.x, n - 1, 1); // xLast [1, nEmbd]
      ops.normMatmul(b.xb, src, this.outputNorm, this.outputHead, rows); // logits [rows, vocab]
      if (c.logitScale !== 1) ops.scale(b.logits, c.logitScale, rows);
      if (c.finalSoftcap > 0) ops.softcap(b.logits, c.finalSoftcap, rows);
    }
    ops.endStep();
  }

  /** Attention sub-block of layer il: x += attention(norm(x)), per sequence when the step has several (`rows`). */
  private attentionBlock(
    p: AttentionLayerPlan,
    il: number,
    n: number,
    startPos: number,
    rows: readonly SequenceToken[] | null,
  ): void {
    const { ops, buffers: b } = this;
    ops.normMatmul(b.xb, b.x, p.attnNorm, p.qkv, n); // q (or qg) [n, nHeads·headDim (·2)], k and v [n, nKvHeads·headDim]
    if (p.vFromK) ops.copyRows(p.v, p.k, 0, n); // no attn_v: V is the raw K projection (gemma4)
    const g = p.outputGate;
    if (g) ops.splitHeadPairs(p.q, g.gate, g.qg, n, p.attention.headDim); // q, gate [n, nHeads·headDim]
    if (!this.config.qkNormAfterRope) this.normQk(p, p.q, p.k, n);
    if (rows) this.attendRows(il, p, rows);
    else this.attend(il, p, p.q, p.k, p.v, p.att, n, startPos); // att [n, nHeads·headDim]
    if (g) ops.mulSigmoid(p.att, g.gate, n); // att ·= sigmoid(gate)
    ops.matmulResidual(b.x, p.att, p.w.wo, n, p.attnOut); // x [n, nEmbd] += (post-norm) att · woᵀ
    const s = p.ssm; // falcon-h1: the Mamba-2 mixer of the same normed input (its ssm_in ran with q, k, v)
    if (s) {
      ops.mamba2(s.out, s.inputs, il, n, s.small, this.config.normEps); // out [n, dInner]
      ops.matmulResidual(b.x, s.out, s.outProj, n, s.mixerOut); // x [n, nEmbd] += out · ssm_outᵀ
    }
  }

  /** RMSNorm of q and k in place, per head or over all heads (`qNormGroup`). */
  private normQk(p: AttentionLayerPlan, q: Activation, k: Activation, n: number): void {
    const eps = this.config.normEps;
    if (p.w.qNorm) this.ops.rmsNorm(q, q, p.w.qNorm, eps, n, p.qNormGroup); // q [n, nHeads·headDim]
    if (!p.ownKv) return;
    if (p.w.kNorm) this.ops.rmsNorm(k, k, p.w.kNorm, eps, n, p.kNormGroup); // k [n, nKvHeads·headDim]
    if (this.config.valueNorm) this.ops.rmsNorm(p.v, p.v, null, eps, n, p.attention.headDim); // weightless, per head
  }

  /**
   * Rope, KV store (cache[step slot][il][pos … pos+n) = k, v) and attention of one sequence's n rows at positions
   * pos … pos+n−1 (one attention temperature serves them: `temperatureRun`).
   */
  private attend(
    il: number,
    p: AttentionLayerPlan,
    q: Activation,
    k: Activation,
    v: Activation,
    att: Activation,
    n: number,
    pos: number,
  ): void {
    const lateNorm = this.config.qkNormAfterRope;
    if (p.kvSource !== il) {
      // KV shared with an earlier layer (gemma4): rope q only and attend over that layer's cache, storing nothing.
      if (p.rope) this.ops.rope(q, n, p.rope);
      this.ops.attention(att, q, p.kvSource, n, this.attentionParams(p));
      return;
    }
    if (p.rope && !lateNorm) this.ops.ropeStoreKv(il, q, k, v, n, p.rope);
    else {
      if (p.rope) this.ops.rope(q, n, p.rope); // no rope on a NoPE layer: positions only through the causal mask
      if (p.rope) this.ops.rope(k, n, p.rope);
      if (lateNorm) this.normQk(p, q, k, n); // hunyuan-dense: q/k norms after rope
      this.ops.storeKv(il, k, v, n);
    }
    const temperature = attentionTemperature(this.config, pos);
    if (temperature !== 1) this.ops.scale(q, temperature, n); // mistral3: q · temperature after rope
    this.ops.attention(att, q, il, n, this.attentionParams(p));
  }

  /** The layer's attention parameters; non-causal while a non-causal chunk of embedding rows runs. */
  private attentionParams(p: AttentionLayerPlan): AttentionParams {
    return this.input?.causal === false ? { ...p.attention, causal: false } : p.attention;
  }

  /** `attend` per sequence of a multi-sequence step: row r's q/k/v gathered into one-row buffers, att scattered back. */
  private attendRows(il: number, p: AttentionLayerPlan, rows: readonly SequenceToken[]): void {
    const { ops } = this;
    ops.setSequence(rows[0].slot, rows[0].pos, this.rowStreams[0]);
    this.attend(il, p, p.q, p.k, p.v, p.att, 1, rows[0].pos); // row 0 is already where a one-row step has it
    const s = p.seq!;
    for (let r = 1; r < rows.length; r++) {
      ops.copyRows(s.q, p.q, r, 1);
      ops.copyRows(s.k, p.k, r, 1);
      ops.copyRows(s.v, p.v, r, 1);
      ops.setSequence(rows[r].slot, rows[r].pos, this.rowStreams[r]);
      this.attend(il, p, s.q, s.k, s.v, s.att, 1, rows[r].pos);
      ops.copyRows(p.att, s.att, 0, 1, r); // att[r] = attention of sequence r
    }
  }

  /** Short-convolution sub-block of layer il (lfm2): x += out_proj(C · conv([state ‖ B·x])), state updated. */
  private shortConvBlock(p: ShortConvLayerPlan, il: number, n: number): void {
    const { ops, buffers: b } = this;
    ops.normMatmul(b.xb, b.x, p.attnNorm, p.inProj, n); // bcx [n, 3·nEmbd]
    ops.shortConv(b.xb, p.bcx, il, n, p.w.conv); // xb [n, nEmbd] (the normed input is no longer needed)
    ops.matmulResidual(b.x, b.xb, p.w.outProj, n, p.convOut); // x [n, nEmbd] += xb · out_projᵀ
  }
}
