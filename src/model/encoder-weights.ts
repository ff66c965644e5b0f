/**
 * The weights of an encoder (bert family, `model/encoder.ts`) and their loading: named and shape-checked first, read
 * in file order by the `WeightLoader`, llama.cpp's tensor names (`src/models/bert.cpp`). The rows added to every token
 * embedding — token-type row 0 (llama.cpp: every token is "sentence A") plus the absolute position embedding — are
 * summed on the host once at load into one f32 table indexed by position, [positions, nEmbd].
 */

import type { Weight } from '../backend/ops.js';
import { LlmError } from '../errors.js';
import { GgmlType } from '../gguf/types.js';
import type { ModelConfig } from './config.js';
import type { EncoderExperts } from './encoder-moe.js';
import type { RankHead } from './pooling.js';
import { type WeightLoader, WeightSlot } from './weight-loader.js';

/**
 * How an encoder architecture's blocks differ (llama.cpp's bert graph branches on the architecture): the FFN — bert's
 * un-gated GELU with biases, or nomic-bert's SwiGLU without biases (llama.cpp ignores FFN biases there) — and NEOX
 * rope of q and k (nomic-bert) instead of position embeddings.
 */
export interface EncoderOptions {
  /**
   * 'glu-fused' (modern-bert): one `ffn_up` of 2·ffnDim rows, the gate's rows first, split at load; the GLU's
   * activation is the config's `activation` (GEGLU or SwiGLU).
   */
  readonly ffn: 'gelu' | 'swiglu' | 'glu-fused' | 'geglu';
  readonly rope: boolean;
  /**
   * jina-bert-v2: ALiBi attention biases of this maximum bias (llama.cpp's `f_max_alibi_bias` 8) instead of positions;
   * its 'geglu' FFN is gelu(x · ffn_gateᵀ) · (x · ffn_upᵀ + up bias) (a gate-less `ffn_up` of 2·ffnDim rows holds the
   * gate's rows first), and q/k may have LayerNorms (`attn_q_norm`, `attn_k_norm`, over all heads).
   */
  readonly alibiMaxBias?: number;
  /**
   * modern-bert's pre-norm blocks: x += attn(LN(x)) (`attn_norm`, absent on layer 0: identity), x += ffn(LN(x))
   * (`ffn_norm`), LayerNorms without bias, a final `output_norm`; no post-norms, no token types or positions.
   */
  readonly preNorm?: boolean;
}

/** A LayerNorm's weight and bias. */
export interface LayerNormWeights {
  readonly weight: Weight; // [nEmbd]
  readonly bias: Weight | null; // [nEmbd]
}

/** One encoder block. */
export interface EncoderLayerWeights {
  readonly wq: Weight; // [nHeads·headDim rows, nEmbd]
  readonly wk: Weight; // [nKvHeads·headDim rows, nEmbd]
  readonly wv: Weight; // [nKvHeads·headDim rows, nEmbd]
  readonly bq: Weight | null; // [nHeads·headDim]
  readonly bk: Weight | null; // [nKvHeads·headDim]
  readonly bv: Weight | null; // [nKvHeads·headDim]
  readonly wo: Weight; // [nEmbd rows, nHeads·headDim]
  readonly bo: Weight | null; // [nEmbd]
  /** LayerNorms of q and k over all heads (jina-bert-v2, optional), else null. */
  readonly qNorm: LayerNormWeights | null; // [nHeads·headDim]
  readonly kNorm: LayerNormWeights | null; // [nKvHeads·headDim]
  /** Pre-norms of the attention and the FFN (modern-bert), else null. */
  readonly attnNorm: LayerNormWeights | null;
  readonly ffnNorm: LayerNormWeights | null;
  /** LayerNorm of x + attention (`attn_output_norm`; null with pre-norms). */
  readonly attnOutNorm: LayerNormWeights | null;
  /** jina-embeddings-v2-base-code's second LayerNorm, of LN(x + attn) + the layer input (`attn_norm_2`), else null. */
  readonly attnNorm2: LayerNormWeights | null;
  /** SwiGLU gate (nomic-bert), or null for the un-gated GELU FFN. */
  readonly gate: Weight | null; // [ffnDim rows, nEmbd]
  /** The dense FFN's up and down (null on a MoE layer). */
  readonly up: Weight | null; // [ffnDim rows, nEmbd]
  readonly upBias: Weight | null; // [ffnDim]
  readonly down: Weight | null; // [nEmbd rows, ffnDim]
  readonly downBias: Weight | null; // [nEmbd]
  /** The experts replacing the dense FFN on a MoE layer (nomic-bert-moe), else null. */
  readonly experts: EncoderExperts | null;
  /** LayerNorm of x + FFN (`layer_output_norm`; null with pre-norms). */
  readonly outNorm: LayerNormWeights | null;
}

/** Every weight of an encoder. */
export interface EncoderWeights {
  readonly tokenEmbd: Weight; // [vocab rows, nEmbd]
  /**
   * Position embedding + token-type row 0, by position: [positions rows, nEmbd] f32; without position embeddings
   * (nomic-bert) the type row alone, [1, nEmbd], added to every token; null when neither exists.
   */
  readonly inputRows: Weight | null;
  /** LayerNorm of the summed input embeddings (`token_embd_norm`). */
  readonly embdNorm: LayerNormWeights;
  readonly layers: readonly EncoderLayerWeights[];
  /** LayerNorm of the last layer's output (`output_norm`, modern-bert), else null. */
  readonly outputNorm: LayerNormWeights | null;
  /** Classifier of a rank-pooling model (host-side), or null. */
  readonly rankHead: RankHead | null;
}

/**
 * The classifier of a rank-pooling encoder (llama.cpp `build_pooling`), on the host: the optional dense `cls` layer
 * (+ bias, then tanh; modern-bert: GELU, then the bias-free LayerNorm `cls.norm`, after mean pooling) and
 * `cls.output` (+ bias) of n_cls_out outputs, applied to the first token's hidden state; a file without `cls.output`
 * ends at `cls` (jina-reranker-v1: one output); null when it has neither.
 */
export async function encoderRankHeadOf(loader: WeightLoader, c: ModelConfig): Promise<RankHead | null> {
  const E = c.embeddingLength;
  const hasOut = loader.has('cls.output.weight');
  if (!hasOut && !loader.has('cls.weight')) return null;
  const modern = c.arch === 'modern-bert';
  let dense: RankHead['dense'] = null;
  if (loader.has('cls.weight')) {
    const nDense = loader.info('cls.weight').shape[1] ?? 1;
    dense = {
      weight: await loader.readHostF32('cls.weight', [E, nDense]), // [nDense, nEmbd]
      bias: loader.has('cls.bias') ? await loader.readHostF32('cls.bias', [nDense]) : null,
      gelu: modern,
      norm:
        modern && loader.has('cls.norm.weight')
          ? { weight: await loader.readHostF32('cls.norm.weight', [nDense]), eps: c.normEps }
          : null,
    };
  }
  const width = dense ? dense.weight.length / E : E;
  const nOut = hasOut ? (loader.info('cls.output.weight').shape[1] ?? 1) : width;
  const weight = hasOut ? await loader.readHostF32('cls.output.weight', [width, nOut]) : null; // [nOut, width]
  const bias = hasOut && loader.has('cls.output.bias') ? await loader.readHostF32('cls.output.bias', [nOut]) : null;
  return { weight, bias, nOut, lastToken: false, meanPool: modern, softmax: false, dense };
}

/**
 * `position_embd` (+ `token_types` row 0 added to each row), uploaded as one f32 table [positions rows, nEmbd];
 * llama.cpp adds them to the token embedding in f32 (bert.cpp).
 */
async function inputRowsOf(loader: WeightLoader, c: ModelConfig): Promise<Weight | null> {
  const E = c.embeddingLength;
  const hasPos = loader.has('position_embd.weight');
  const hasType = loader.has('token_types.weight');
  if (!hasPos && !hasType) return null;
  const positions = hasPos ? loader.info('position_embd.weight').shape[1]! : 1;
  const table = hasPos ? await loader.readHostF32('position_embd.weight', [E, positions]) : new Float32Array(E); // [positions, E]
  if (hasType) {
    const nTypes = loader.info('token_types.weight').shape[1] ?? 1;
    const types = await loader.readHostF32('token_types.weight', [E, nTypes]); // [nTypes, E]
    for (let p = 0; p < positions; p++) for (let j = 0; j < E; j++) table[p * E + j] = table[p * E + j]! + types[j]!;
  }
  return loader.uploadBuilt(
    { name: 'position_embd+token_types[0]', type: GgmlType.F32, shape: [E, positions] },
    new Uint8Array(table.buffer),
  );
}

/**
 * A fused bias (`attn_qkv.bias`, [Σ sizes]) read on the host and uploaded as one f32 weight per part, in order
 * (llama.cpp adds it to the fused product before viewing q, k and v, i.e. each part to its own rows).
 */
async function splitBias(loader: WeightLoader, name: string, sizes: readonly number[]): Promise<WeightSlot[]> {
  const all = await loader.readHostF32(name, [sizes.reduce((a, b) => a + b, 0)]); // [Σ sizes]
  const starts = sizes.map((_, i) => sizes.slice(0, i).reduce((a, b) => a + b, 0));
  return Promise.all(
    sizes.map(async (n, i) => {
      const slot = new WeightSlot(`${name} [${starts[i]}, ${starts[i]! + n})`);
      const part = all.slice(starts[i], starts[i]! + n); // [n]
      slot.set(
        await loader.uploadBuilt({ name: slot.name, type: GgmlType.F32, shape: [n] }, new Uint8Array(part.buffer)),
      );
      return slot;
    }),
  );
}

/** Names, reads and uploads every weight of an encoder. */
export async function loadEncoderWeights(
  loader: WeightLoader,
  c: ModelConfig,
  options: EncoderOptions,
  rankHead: RankHead | null,
): Promise<EncoderWeights> {
  const E = c.embeddingLength;
  const inputRows = await inputRowsOf(loader, c);
  const norm = (name: string) => ({
    weight: loader.upload(`${name}.weight`, [E]),
    bias: loader.optional(`${name}.bias`, [E]),
  });
  const tokenEmbd = loader.upload('token_embd.weight', [E, c.vocabSize]);
  const embdNorm = norm('token_embd_norm');
  const pre = options.preNorm === true;
  const outputNorm = pre ? norm('output_norm') : null;
  const qkvBiases = await Promise.all(
    Array.from({ length: c.nLayers }, (_, il) => {
      const b = `blk.${il}.`;
      const kvRows = c.layerKvHeads[il]! * c.headDim;
      return loader.has(`${b}attn_qkv.weight`) && loader.has(`${b}attn_qkv.bias`)
        ? splitBias(loader, `${b}attn_qkv.bias`, [c.layerHeads[il]! * c.headDim, kvRows, kvRows])
        : null;
    }),
  );
  const layerSlots = Array.from({ length: c.nLayers }, (_, il) => {
    const b = `blk.${il}.`;
    const qRows = c.layerHeads[il]! * c.headDim;
    const kvRows = c.layerKvHeads[il]! * c.headDim;
    const ff = c.layerFfnDims[il]!;
    const fused = loader.has(`${b}attn_qkv.weight`); // nomic-bert: q | k | v rows in one matrix, split at load
    const fusedBias = qkvBiases[il] ?? null; // jina-embeddings-v3: the fused matrix's bias, split the same way
    const [wq, wk, wv] = fused
      ? loader.uploadSplit(`${b}attn_qkv.weight`, E, [
          [`${b}attn_q.weight`, qRows],
          [`${b}attn_k.weight`, kvRows],
          [`${b}attn_v.weight`, kvRows],
        ])
      : [
          loader.upload(`${b}attn_q.weight`, [E, qRows]),
          loader.upload(`${b}attn_k.weight`, [E, kvRows]),
          loader.upload(`${b}attn_v.weight`, [E, kvRows]),
        ];
    const swiglu = options.ffn === 'swiglu';
    // modern-bert (and a jina-bert-v2 without ffn_gate): gate | up rows in one ffn_up, split at load
    const geglu = options.ffn === 'geglu';
    const fusedUp = options.ffn === 'glu-fused' || (geglu && !loader.has(`${b}ffn_gate.weight`));
    const norm2 = !geglu && loader.has(`${b}attn_norm_2.weight`); // only jina-bert-v2 reads attn_norm_2 (llama.cpp)
    if (norm2 || (geglu && fusedUp && loader.has(`${b}ffn_up.bias`))) {
      const name = norm2 ? `${b}attn_norm_2.weight` : `${b}ffn_up.bias`;
      throw new LlmError('unsupported-arch', `loading model: ${c.arch}'s ${name} is not supported`, {
        details: { tensor: name },
      });
    }
    const normOf = (name: string, cols: number) =>
      loader.has(`${name}.weight`)
        ? { weight: loader.upload(`${name}.weight`, [cols]), bias: loader.optional(`${name}.bias`, [cols]) }
        : null;
    const moe = c.moe?.layerIsMoe[il] === true ? c.moe : null; // nomic-bert-moe: experts instead of the dense FFN
    const dense = moe === null;
    const [fusedGate, fusedUpPart] = fusedUp
      ? loader.uploadSplit(`${b}ffn_up.weight`, E, [
          [`${b}ffn_up.weight (gate)`, ff],
          [`${b}ffn_up.weight (up)`, ff],
        ])
      : [null, null];
    return {
      wq: wq!,
      wk: wk!,
      wv: wv!,
      bq: fusedBias?.[0] ?? loader.optional(`${b}attn_q.bias`, [qRows]),
      bk: fusedBias?.[1] ?? loader.optional(`${b}attn_k.bias`, [kvRows]),
      bv: fusedBias?.[2] ?? loader.optional(`${b}attn_v.bias`, [kvRows]),
      wo: loader.upload(`${b}attn_output.weight`, [qRows, E]),
      bo: loader.optional(`${b}attn_output.bias`, [E]),
      qNorm: geglu ? normOf(`${b}attn_q_norm`, qRows) : null,
      kNorm: geglu ? normOf(`${b}attn_k_norm`, kvRows) : null,
      attnNorm: pre && (il > 0 || loader.has(`${b}attn_norm.weight`)) ? norm(`${b}attn_norm`) : null,
      ffnNorm: pre ? norm(`${b}ffn_norm`) : null,
      attnOutNorm: pre ? null : norm(`${b}attn_output_norm`),
      attnNorm2: geglu ? normOf(`${b}attn_norm_2`, E) : null,
      gate: fusedGate ?? ((swiglu || geglu) && dense ? loader.upload(`${b}ffn_gate.weight`, [E, ff]) : null),
      up: fusedUpPart ?? (dense ? loader.upload(`${b}ffn_up.weight`, [E, ff]) : null),
      upBias: swiglu || fusedUp || !dense ? null : loader.optional(`${b}ffn_up.bias`, [ff]),
      down: dense ? loader.upload(`${b}ffn_down.weight`, [ff, E]) : null,
      downBias: swiglu || !dense ? null : loader.optional(`${b}ffn_down.bias`, [E]),
      experts: moe
        ? {
            router: loader.upload(`${b}ffn_gate_inp.weight`, [E, moe.nExperts]),
            up: loader.upload(`${b}ffn_up_exps.weight`, [E, ff, moe.nExperts]),
            down: loader.upload(`${b}ffn_down_exps.weight`, [ff, E, moe.nExperts]),
            nExperts: moe.nExperts,
          }
        : null,
      outNorm: pre ? null : norm(`${b}layer_output_norm`),
    };
  });
  await loader.loadAll();
  const get = (s: WeightSlot | null): Weight | null => s?.get() ?? null;
  const ln = (n: { weight: WeightSlot; bias: WeightSlot | null }): LayerNormWeights => ({
    weight: n.weight.get(),
    bias: get(n.bias),
  });
  const lnOrNull = (n: { weight: WeightSlot; bias: WeightSlot | null } | null) => (n ? ln(n) : null);
  return {
    tokenEmbd: tokenEmbd.get(),
    inputRows,
    embdNorm: ln(embdNorm),
    layers: layerSlots.map((l) => ({
      wq: l.wq.get(),
      wk: l.wk.get(),
      wv: l.wv.get(),
      bq: get(l.bq),
      bk: get(l.bk),
      bv: get(l.bv),
      wo: l.wo.get(),
      bo: get(l.bo),
      qNorm: lnOrNull(l.qNorm),
      kNorm: lnOrNull(l.kNorm),
      attnNorm: lnOrNull(l.attnNorm),
      ffnNorm: lnOrNull(l.ffnNorm),
      attnOutNorm: lnOrNull(l.attnOutNorm),
      attnNorm2: lnOrNull(l.attnNorm2),
      gate: get(l.gate),
      up: get(l.up),
      upBias: get(l.upBias),
      down: get(l.down),
      downBias: get(l.downBias),
      experts: l.experts && {
        router: l.experts.router.get(),
        up: l.experts.up.get(),
        down: l.experts.down.get(),
        nExperts: l.experts.nExperts,
      },
      outNorm: lnOrNull(l.outNorm),
    })),
    outputNorm: lnOrNull(outputNorm),
    rankHead,
  };
}
