/**
 * The forward pass of an encoder (bert family; llama.cpp `src/models/bert.cpp`), written only against `Ops` like the
 * decoder's (`transformer.ts`) but with BERT's post-norm blocks: embed (+ position/type rows) → LayerNorm → per layer
 * [q,k,v (+bias) → (nomic-bert: rope) → attention over the whole sequence → x += o (+bias) → x = LN(x) →
 * x += down(gelu(up(x)) or swiglu, or a mixture of GELU experts: encoder-moe.ts) → x = LN(x)]
 * (modern-bert: pre-norm blocks, `EncoderOptions.preNorm`, with local layers in a symmetric window)
 * → the hidden states, which `model/pooling.ts` pools into embeddings. No lm head: `eval` runs the pass (warmup) and
 * `readLogits` gives the last token's hidden state; sampling ops are refused. A sequence runs whole in one step at
 * positions 0 … n−1 (longer ones than `ubatchSize` are refused, as llama.cpp asserts n_ubatch ≥ n_tokens).
 * Several sequences can share one step (`hiddenStatesPacked`): the row-wise ops run over all their rows at once, and
 * attention once per sequence on its own rows (copied into the `seq` buffers), at positions restarting from 0 in the
 * one slot — so no sequence sees another, as llama.cpp's per-sequence mask of a multi-sequence embedding batch.
 * The step is bounded by `ubatchSize` alone, not the context (llama.cpp does not cap n_batch by n_ctx for
 * non-causal models): the KV cache holds one sequence at a time.
 */

import type {
  Activation,
  AttentionParams,
  GluScratch,
  KvCacheSpec,
  Ops,
  Projection,
  ResidualOptions,
  RopeParams,
  TopK,
} from '../backend/ops.js';
import { kvCacheBytes } from '../backend/kv-rows.js';
import type { KvType } from '../backend/kv-type.js';
import { LlmError, throwIfAborted } from '../errors.js';
import type { ModelConfig } from './config.js';
import { type EncoderMoeScratch, encoderMoeFfn, encoderMoeScratch } from './encoder-moe.js';
import type { EncoderLayerWeights, EncoderOptions, EncoderWeights, LayerNormWeights } from './encoder-weights.js';
import type { KvCacheInfo, LogitsWanted, SequenceToken, Transformer } from './model.js';
import type { RankHead } from './pooling.js';

/** One layer's buffers and step parameters, built once at load. */
interface EncoderLayerPlan {
  readonly w: EncoderLayerWeights;
  readonly qkv: readonly Projection[];
  readonly q: Activation; // [ubatch, nHeads·headDim]
  readonly att: Activation; // [ubatch, nHeads·headDim]
  readonly k: Activation; // [ubatch, nKvHeads·headDim]
  readonly v: Activation; // [ubatch, nKvHeads·headDim]
  readonly hidden: Activation; // [ubatch, ffnDim]
  /** The gated FFN's buffers (normed: unused, gate and up [ubatch, ffnDim]), with a gate. */
  readonly ffnScratch: GluScratch;
  /** NEOX rope of q and k (nomic-bert), or null. */
  readonly rope: RopeParams | null;
  readonly attention: AttentionParams;
  readonly attnOut: ResidualOptions;
  readonly ffnOut: ResidualOptions;
  /** The MoE scratch of a layer with experts (nomic-bert-moe), else null. */
  readonly moe: EncoderMoeScratch | null;
  /** One sequence's rows of q, k, v and att when a step packs several ([ubatch, …] each, shared by the layers). */
  readonly seq: { readonly q: Activation; readonly k: Activation; readonly v: Activation; readonly att: Activation };
}

/** An encoder on one backend: implements the engine's `Transformer` for embeddings. */
export class EncoderModel implements Transformer {
  readonly ubatchSize: number;
  readonly contextLength: number;
  readonly nSlots: number;
  readonly rankHead: RankHead | null;
  readonly kvCache: KvCacheInfo;
  readonly hasRecurrentState = false;
  readonly maxSequenceRows = 0;
  private readonly x: Activation; // [ubatch, nEmbd] residual stream (the hidden states after the last layer)
  private readonly xb: Activation; // [ubatch, nEmbd] position/type rows of the step
  private readonly xb2: Activation; // [ubatch, nEmbd] scratch of the residual products
  private readonly plans: readonly EncoderLayerPlan[];
  /** Whether `inputRows` has a row per position (else its one row is added to every token). */
  private readonly byPosition: boolean;
  /** Tokens of the last `eval` (its final hidden row is what `readLogits` returns), 0 when none. */
  private lastTokens = 0;

  constructor(
    readonly config: ModelConfig,
    private readonly weights: EncoderWeights,
    readonly ops: Ops,
    options: { contextLength: number; ubatchSize: number; nSlots: number; kvType?: KvType },
    encoder: EncoderOptions,
  ) {
    const c = config;
    this.contextLength = options.contextLength;
    this.nSlots = options.nSlots;
    this.rankHead = weights.rankHead;
    this.ubatchSize = Math.max(1, options.ubatchSize);
    const u = this.ubatchSize;
    // With one row (the type row alone: no position embeddings) every token adds row 0.
    this.byPosition = (weights.inputRows?.nRows ?? 0) > 1;
    const E = c.embeddingLength;
    this.x = ops.createActivation('x', u, E);
    this.xb = ops.createActivation('xb', u, E);
    this.xb2 = ops.createActivation('xb2', u, E);
    const kvSpec: KvCacheSpec = {
      nSlots: options.nSlots,
      contextLength: options.contextLength,
      layers: c.layerKvHeads.map((nKvHeads) => ({ nKvHeads, headDim: c.headDim })),
      ...(options.kvType ? { kvType: options.kvType } : {}),
    };
    const kvType = ops.createKvCache(kvSpec);
    this.kvCache = { type: kvType, bytes: kvCacheBytes(kvSpec, kvType) };
    const byWidth = new Map<string, Activation>(); // buffers shared by the layers of one width
    const width = (label: string, cols: number): Activation => {
      const key = `${label}:${cols}`;
      if (!byWidth.has(key)) byWidth.set(key, ops.createActivation(label, u, cols));
      return byWidth.get(key)!;
    };
    const moeByShape = new Map<string, EncoderMoeScratch>(); // MoE scratch shared by the layers of one shape
    const moeScratch = (key: string, make: () => EncoderMoeScratch): EncoderMoeScratch => {
      if (!moeByShape.has(key)) moeByShape.set(key, make());
      return moeByShape.get(key)!;
    };
    this.plans = weights.layers.map((w, il) => {
      const qCols = c.layerHeads[il]! * c.headDim;
      const kvCols = c.layerKvHeads[il]! * c.headDim;
      const sliding = c.slidingLayers[il] === true && c.slidingWindow > 0;
      const q = width('q', qCols);
      const k = width('k', kvCols);
      const v = width('v', kvCols);
      const residual = (bias: EncoderLayerWeights['bo']): ResidualOptions => ({
        bias,
        postNorm: null,
        scale: 1,
        scratch: this.xb2,
      });
      return {
        w,
        qkv: [
          { out: q, weight: w.wq, bias: w.bq },
          { out: k, weight: w.wk, bias: w.bk },
          { out: v, weight: w.wv, bias: w.bv },
        ],
        q,
        k,
        v,
        att: width('att', qCols),
        hidden: width('hidden', c.layerFfnDims[il]!),
        ffnScratch: {
          normed: this.xb2,
          gate: width('gate', c.layerFfnDims[il]!),
          up: width('up', c.layerFfnDims[il]!),
        },
        rope: encoder.rope
          ? {
              kind: 'neox',
              headDim: c.headDim,
              nRot: c.ropeDims,
              ...(sliding && c.ropeSwa
                ? { theta: c.ropeSwa.theta, freqScale: c.ropeSwa.freqScale }
                : { theta: c.ropeTheta, freqScale: c.ropeFreqScale }),
              // llama.cpp passes the context's ext_factor and attn_factor (local layers: where `withYarn`)
              ...(c.ropeYarn && !(sliding && c.ropeSwa && !c.ropeSwa.withYarn) ? { yarn: c.ropeYarn } : {}),
            }
          : null,
        attention: {
          nHeads: c.layerHeads[il]!,
          nKvHeads: c.layerKvHeads[il]!,
          headDim: c.headDim,
          scale: c.attentionScale,
          slidingWindow: sliding ? c.slidingWindow : 0, // modern-bert's local layers
          softcap: 0,
          ...(c.causalAttention ? {} : { causal: false }),
          ...(sliding && c.symmetricWindow ? { symmetricWindow: true } : {}),
          ...(encoder.alibiMaxBias ? { alibiMaxBias: encoder.alibiMaxBias } : {}),
        },
        moe:
          w.experts && c.moe
            ? moeScratch(`${c.layerFfnDims[il]}:${c.moe.layerUsed[il]}`, () =>
                encoderMoeScratch(ops, u, E, c.layerFfnDims[il]!, w.experts!.nExperts, c.moe!.layerUsed[il]!),
              )
            : null,
        attnOut: residual(w.bo),
        ffnOut: residual(w.downBias),
        seq: {
          q: width('seq.q', qCols),
          k: width('seq.k', kvCols),
          v: width('seq.v', kvCols),
          att: width('seq.att', qCols),
        },
      };
    });
  }

  /**
   * Runs `tokens` whole from position 0 of `slot` and returns the hidden states after the last layer,
   * [tokens.length, nEmbd] row-major: what llama.cpp pools into embeddings (`t_embd`).
   */
  async hiddenStates(tokens: Int32Array, slot: number, options: { signal?: AbortSignal } = {}): Promise<Float32Array> {
    throwIfAborted(options.signal, 'computing embeddings');
    this.checkRequest(tokens, 0, slot);
    this.forward([tokens], slot);
    return this.ops.read(this.x, tokens.length); // [n, nEmbd]
  }

  /**
   * Several sequences in one pass (see the file header): their hidden states concatenated in order,
   * [Σ lengths, nEmbd] row-major, each as `hiddenStates` of it alone gives. Together they must fit one step.
   */
  async hiddenStatesPacked(
    sequences: readonly Int32Array[],
    slot: number,
    options: { signal?: AbortSignal } = {},
  ): Promise<Float32Array> {
    throwIfAborted(options.signal, 'computing embeddings');
    if (sequences.length === 0) throw new LlmError('invalid-request', 'computing embeddings: no sequences to pack');
    const total = this.checkPack(sequences, slot);
    this.forward(sequences, slot);
    return this.ops.read(this.x, total); // [Σ n, nEmbd]
  }

  /** Checks a pack of sequences for one step; returns their total length. */
  private checkPack(sequences: readonly Int32Array[], slot: number): number {
    let total = 0;
    for (const tokens of sequences) {
      this.checkRequest(tokens, 0, slot);
      total += tokens.length;
    }
    if (total > this.ubatchSize) {
      throw new LlmError(
        'invalid-request',
        `computing embeddings: ${sequences.length} sequences of ${total} tokens do not fit one step of ` +
          `${this.ubatchSize}; pack fewer`,
        { details: { tokens: total, ubatchSize: this.ubatchSize } },
      );
    }
    return total;
  }

  /**
   * `hiddenStatesPacked` of only the row each sequence's `pooling` keeps (its first for `cls`, its last for `last`),
   * [sequences.length, nEmbd] row-major: the last layer runs its attention over every row (they are its keys) and
   * everything after it (output projection, norms, FFN) on the pooled rows alone.
   */
  async pooledStates(
    sequences: readonly Int32Array[],
    slot: number,
    pooling: 'cls' | 'last',
    options: { signal?: AbortSignal } = {},
  ): Promise<Float32Array> {
    throwIfAborted(options.signal, 'computing embeddings');
    if (sequences.length === 0) throw new LlmError('invalid-request', 'computing embeddings: no sequences to pack');
    this.checkPack(sequences, slot);
    this.forward(sequences, slot, pooling);
    return this.ops.read(this.x, sequences.length); // [nSeq, nEmbd]
  }

  /** Runs the pass (warmup); `readLogits` then gives the last token's hidden state. Encoders have no logits. */
  async eval(
    tokens: Int32Array,
    startPos: number,
    slot: number,
    options: { logits?: LogitsWanted; signal?: AbortSignal } = {},
  ): Promise<Float32Array | null> {
    throwIfAborted(options.signal, 'evaluating tokens');
    if (options.logits === 'all') throw this.noLogits('evaluating tokens with every logit');
    this.checkRequest(tokens, startPos, slot);
    this.forward([tokens], slot);
    this.lastTokens = tokens.length;
    return null;
  }

  /** The last evaluated token's final hidden state ([nEmbd]): an encoder has no lm head. */
  async readLogits(row?: number): Promise<Float32Array> {
    if (this.lastTokens === 0 || (row !== undefined && row !== 0)) throw this.noLogits('reading logits');
    const rows = await this.ops.read(this.x, this.lastTokens);
    return rows.slice((this.lastTokens - 1) * this.config.embeddingLength);
  }

  argmax(): Promise<number> {
    return Promise.reject(this.noLogits('sampling'));
  }

  topK(): Promise<TopK> {
    return Promise.reject(this.noLogits('sampling'));
  }

  evalRows(_rows: readonly SequenceToken[]): Promise<void> {
    return Promise.reject(this.noLogits('evaluating sequences'));
  }

  copySlot(srcSlot: number, dstSlot: number, nPositions: number): void {
    for (const s of [srcSlot, dstSlot]) this.checkSlot(s);
    if (nPositions > 0) this.ops.copyKv(srcSlot, dstSlot, Math.min(nPositions, this.contextLength));
  }

  async readState(slot: number): Promise<Float32Array | null> {
    this.checkSlot(slot);
    return null;
  }

  writeState(slot: number): void {
    this.checkSlot(slot);
  }

  destroy(): void {
    this.ops.destroy();
  }

  /**
   * The sequences whole, packed one after another in one step, each at positions 0 … len−1 of `slot`;
   * x [Σ len, nEmbd] holds their hidden states afterwards.
   */
  private forward(sequences: readonly Int32Array[], slot: number, pooled?: 'cls' | 'last'): void {
    const { ops, weights: w, x, xb } = this;
    const tokens = sequences.length === 1 ? sequences[0]! : concatTokens(sequences); // [n]
    const lengths = sequences.map((t) => t.length);
    const n = tokens.length;
    if (w.inputRows) {
      // The position (+ type) rows, looked up by position: a step of their own, as `embed` reads the step's ids.
      const positions = new Int32Array(n); // [n] 0 … len−1 per sequence (all 0 for the type row alone)
      if (this.byPosition) {
        let r = 0;
        for (const len of lengths) for (let i = 0; i < len; i++) positions[r++] = i;
      }
      ops.beginStep({ tokens: positions, startPos: 0, slot });
      ops.embed(xb, w.inputRows, n); // xb [n, nEmbd]
      ops.endStep();
    }
    ops.beginStep({ tokens, startPos: 0, slot });
    ops.embed(x, w.tokenEmbd, n); // x [n, nEmbd]
    if (w.inputRows) ops.add(x, x, xb, n); // x += position_embd[pos] + token_types[0]
    this.norm(x, w.embdNorm, n);
    const act = this.config.activation;
    let m = n; // rows after the attention: n, or one per sequence after the last layer's with `pooled`
    for (let il = 0; il < this.plans.length; il++) {
      const p = this.plans[il]!;
      // Pre-norm (modern-bert): the block reads LN(x) from xb2 (free until the residual adds), else x itself.
      const attnIn = p.w.attnNorm ? this.norm(this.xb2, p.w.attnNorm, n) : x;
      ops.normMatmul(xb, attnIn, null, p.qkv, n); // q [n, nHeads·headDim], k and v [n, nKvHeads·headDim] (+ biases)
      const eps = this.config.normEps;
      if (p.w.qNorm) ops.layerNorm(p.q, p.q, p.w.qNorm.weight, p.w.qNorm.bias, eps, n); // jina-bert-v2
      if (p.w.kNorm) ops.layerNorm(p.k, p.k, p.w.kNorm.weight, p.w.kNorm.bias, eps, n);
      const last = pooled && il === this.plans.length - 1 ? pooled : undefined;
      this.attend(il, p, lengths, slot, last); // att [n, nHeads·headDim]
      let att = p.att;
      if (last) {
        m = this.keepPooledRows(p, lengths, last); // x [m, nEmbd], seq.att [m, nHeads·headDim]
        att = p.seq.att;
      }
      if (p.w.attnNorm2) ops.copyRows(xb, x, 0, m); // xb [m, nEmbd]: the layer input, added again below
      ops.matmulResidual(x, att, p.w.wo, m, p.attnOut); // x += att · woᵀ + bo
      if (p.w.attnOutNorm) this.norm(x, p.w.attnOutNorm, m); // x = LN(x)
      if (p.w.attnNorm2) ops.add(x, x, xb, m); // jina-bert-v2 (code): x = LN2(x + layer input)
      if (p.w.attnNorm2) this.norm(x, p.w.attnNorm2, m);
      const ffnIn = p.w.ffnNorm ? this.norm(xb, p.w.ffnNorm, m) : x; // [m, nEmbd]
      if (p.w.experts) {
        encoderMoeFfn(ops, x, xb, p.w.experts, p.moe!, m); // x += Σ_k w_k · expert_k(x)
      } else {
        if (p.w.gate && p.w.upBias) {
          // jina-bert-v2: hidden = gelu(in · gateᵀ) · (in · upᵀ + b), the bias on the up half only
          ops.matmul(p.ffnScratch.gate, ffnIn, p.w.gate, m); // [m, ffnDim]
          ops.matmul(p.ffnScratch.up, ffnIn, p.w.up!, m, p.w.upBias); // [m, ffnDim]
          ops.glu(p.hidden, p.ffnScratch.gate, p.ffnScratch.up, m, act);
        } else if (p.w.gate) {
          ops.gatedFfn(p.hidden, ffnIn, null, p.w.gate, p.w.up!, m, act, p.ffnScratch); // act(in·gateᵀ)·(in·upᵀ)
        } else {
          ops.matmul(p.hidden, ffnIn, p.w.up!, m, p.w.upBias); // hidden [m, ffnDim] = x · upᵀ + b
          ops.gelu(p.hidden, m);
        }
        ops.matmulResidual(x, p.hidden, p.w.down!, m, p.ffnOut); // x += hidden · downᵀ + b
      }
      if (p.w.outNorm) this.norm(x, p.w.outNorm, m); // x = LN(x)
    }
    if (w.outputNorm) this.norm(x, w.outputNorm, m); // modern-bert's final LayerNorm
    ops.endStep();
  }

  /**
   * Attention of layer il for each packed sequence on its own rows: the first in place, each later one's q/k/v rows
   * copied to row 0 of the `seq` buffers, attended at positions 0 … len−1 and its att rows copied back.
   */
  private attend(
    il: number,
    p: EncoderLayerPlan,
    lengths: readonly number[],
    slot: number,
    pooled?: 'cls' | 'last',
  ): void {
    const { ops } = this;
    let offset = 0;
    for (const len of lengths) {
      // The last layer with `pooled`: only the pooled row's output is read afterwards (keepPooledRows).
      const params = pooled ? { ...p.attention, onlyRow: pooled === 'cls' ? 0 : len - 1 } : p.attention;
      const b = offset === 0 ? p : p.seq;
      if (offset > 0) {
        ops.copyRows(b.q, p.q, offset, len);
        ops.copyRows(b.k, p.k, offset, len);
        ops.copyRows(b.v, p.v, offset, len);
      }
      ops.setSequence(slot, 0);
      if (p.rope) ops.ropeStoreKv(il, b.q, b.k, b.v, len, p.rope);
      else ops.storeKv(il, b.k, b.v, len);
      ops.attention(b.att, b.q, il, len, params); // att [len, nHeads·headDim]
      if (offset > 0) ops.copyRows(p.att, b.att, 0, len, offset);
      offset += len;
    }
  }

  /**
   * Moves each sequence's pooled row (its first for `cls`, its last for `last`) of x and of the layer's att to row j
   * (the sequence's index) of x and of `seq.att` (through xb: a copy never reads the rows it writes); returns the count.
   */
  private keepPooledRows(p: EncoderLayerPlan, lengths: readonly number[], pooling: 'cls' | 'last'): number {
    const { ops } = this;
    let offset = 0;
    lengths.forEach((len, j) => {
      const row = offset + (pooling === 'cls' ? 0 : len - 1);
      ops.copyRows(p.seq.att, p.att, row, 1, j);
      ops.copyRows(this.xb, this.x, row, 1, j);
      offset += len;
    });
    ops.copyRows(this.x, this.xb, 0, lengths.length); // x [nSeq, nEmbd]
    return lengths.length;
  }

  /** out = LayerNorm(x) (in place when out is x); returns out. */
  private norm(out: Activation, ln: LayerNormWeights, n: number): Activation {
    this.ops.layerNorm(out, this.x, ln.weight, ln.bias, this.config.normEps, n);
    return out;
  }

  private noLogits(what: string): LlmError {
    return new LlmError(
      'invalid-request',
      `${what}: this ${this.config.arch} model is an encoder without an lm head; it computes embeddings only ` +
        '(engine.embeddings.create)',
      { details: { arch: this.config.arch } },
    );
  }

  private checkRequest(tokens: Int32Array, startPos: number, slot: number): void {
    this.checkSlot(slot);
    if (tokens.length === 0) throw new LlmError('invalid-request', 'evaluating tokens: the token list is empty');
    if (startPos !== 0) {
      throw new LlmError(
        'invalid-request',
        `evaluating tokens at position ${startPos}: an encoder sees each sequence whole, from position 0`,
        { details: { startPos } },
      );
    }
    if (tokens.length > this.contextLength) {
      throw new LlmError(
        'context-overflow',
        `computing embeddings: ${tokens.length} tokens do not fit the context of ${this.contextLength}; load the ` +
          'model with a larger contextLength or shorten the input',
        { details: { nTokens: tokens.length, contextLength: this.contextLength } },
      );
    }
    const rows = this.weights.inputRows?.nRows ?? 1;
    const positions = rows > 1 ? rows : Number.POSITIVE_INFINITY;
    if (tokens.length > this.ubatchSize || tokens.length > positions) {
      throw new LlmError(
        'invalid-request',
        `computing embeddings: ${tokens.length} tokens do not fit one step of ${Math.min(this.ubatchSize, positions)}` +
          (tokens.length > positions
            ? ` (the model has ${positions} trained positions)`
            : '; a model with non-causal attention sees a sequence whole — load it with a larger ubatchSize'),
        { details: { tokens: tokens.length, ubatchSize: this.ubatchSize, positions } },
      );
    }
    for (let i = 0; i < tokens.length; i++) {
      if (!(tokens[i]! >= 0 && tokens[i]! < this.config.vocabSize)) {
        throw new LlmError(
          'invalid-request',
          `evaluating tokens: token ${i} has id ${tokens[i]}, outside the vocabulary (0…${this.config.vocabSize - 1})`,
          { details: { index: i, token: tokens[i]!, vocabSize: this.config.vocabSize } },
        );
      }
    }
  }

  private checkSlot(slot: number): void {
    if (!(Number.isInteger(slot) && slot >= 0 && slot < this.nSlots)) {
      throw new LlmError(
        'invalid-request',
        `sequence slot ${slot} does not exist (the model was loaded with ${this.nSlots})`,
        { details: { slot, nSlots: this.nSlots } },
      );
    }
  }
}

/** The sequences one after another, [Σ lengths]. */
function concatTokens(sequences: readonly Int32Array[]): Int32Array {
  const out = new Int32Array(sequences.reduce((sum, t) => sum + t.length, 0));
  let at = 0;
  for (const t of sequences) {
    out.set(t, at);
    at += t.length;
  }
  return out;
}
