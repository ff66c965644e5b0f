/**
 * `ModelConfig`: every hyper-parameter the forward pass needs, read from GGUF metadata by an architecture entry
 * (`arch/*.ts`) with llama.cpp's defaults (llama-hparams / llama-model.cpp `load_hparams`). `readStandardConfig`
 * reads the keys all supported architectures share; architecture files add their own on top.
 */

import type { RopeSections } from '../backend/rope-multi.js';
import type { AltUpConfig } from './altup-config.js';
import type { Mamba2Dims } from '../backend/mamba2.js';
import type { GluActivation } from '../backend/ops.js';
import type { DeltaNetDims } from '../backend/delta-net-types.js';
import { LlmError } from '../errors.js';
import type { GgufValue } from '../gguf/types.js';
import { MetadataReader } from '../gguf/metadata-reader.js';
import { MODEL_LIMITS as L } from './model-limits.js';
import { type MoeConfig, type MoeRouting, readMoeConfig } from './moe-config.js';

/** Static choices of an architecture: how its forward pass differs from llama's. */
export interface ArchOptions {
  /** 'norm' rotates adjacent pairs (llama); 'neox' rotates halves (qwen2, qwen3, phi3, gemma). */
  readonly ropeKind: 'norm' | 'neox';
  /** Gated FFN activation: SwiGLU ('silu') or GEGLU ('gelu', tanh approximation). */
  readonly activation: GluActivation;
  /** RMSNorm of q and k before rope (`attn_q_norm`, `attn_k_norm`), per head unless `qkNormScope` says otherwise. */
  readonly qkNorm: boolean;
  /** 'head': the q/k norms normalise each head (weight [headDim]); 'all-heads': the whole q or k row (olmo2). */
  readonly qkNormScope: 'head' | 'all-heads';
  /** The q/k norms come after rope instead of before it (hunyuan-dense). */
  readonly qkNormAfterRope: boolean;
  /** RMSNorm of each sub-block's input (`attn_norm`, `ffn_norm`); false: only post-norms (olmo2, exaone4). */
  readonly preNorms: boolean;
  /** RMSNorm of the attention and FFN outputs before their residual adds (`post_attention_norm`, `post_ffw_norm`). */
  readonly postNorms: boolean;
  /** Embeddings are multiplied by √n_embd (gemma). */
  readonly scaleEmbeddings: boolean;
  /** Q, K and V come as one `attn_qkv` matrix (phi3), split at load time. */
  readonly fusedQkv: boolean;
  /** Gate and up come as one `ffn_up` matrix of 2·n_ff rows, gate first (phi3), split at load time. */
  readonly fusedGateUp: boolean;
  /** Mixture-of-experts routing of the FFN (`moe-config.ts`), or null for a dense FFN. */
  readonly moeRouting: MoeRouting | null;
  /** `attn_output.bias` is applied when present (ernie4_5: llama.cpp loads it but never adds it). */
  readonly attnOutBias: boolean;
  /** The lm head is always `token_embd`, even when the file has an `output.weight` (gemma). */
  readonly alwaysTied: boolean;
  /** V gets a weightless per-head RMSNorm; a layer without `attn_v` uses its K projection as V (gemma4). */
  readonly valueNorm: boolean;
  /** The `rope_freqs` divisors ([headDim / 2]) apply to global layers only, not sliding ones (gemma4). */
  readonly globalRopeFreqs: boolean;
  /** Every attention layer has per-head sink logits `attn_sinks` [nHeads] (gpt-oss). */
  readonly attnSinks: boolean;
  /** Non-causal sliding layers see ±window/2 around each token (llama.cpp's symmetric SWA: gemma-embedding). */
  readonly symmetricWindow: boolean;
  /**
   * The file's `rope.scaling.yarn_beta_fast`, `yarn_beta_slow` and `yarn_log_multiplier` apply (mistral3); other
   * architectures' llama.cpp loaders never read them (converters still write them) and take 32, 1 and 0.
   */
  readonly yarnKeys: boolean;
}

/** llama's choices: what an architecture gets for every option it does not set. */
const DEFAULT_ARCH_OPTIONS: ArchOptions = {
  ropeKind: 'norm',
  activation: 'silu',
  qkNorm: false,
  qkNormScope: 'head',
  qkNormAfterRope: false,
  preNorms: true,
  postNorms: false,
  scaleEmbeddings: false,
  fusedQkv: false,
  fusedGateUp: false,
  moeRouting: null,
  attnOutBias: true,
  alwaysTied: false,
  valueNorm: false,
  globalRopeFreqs: false,
  attnSinks: false,
  symmetricWindow: false,
  yarnKeys: false,
};

/** An architecture's options: `DEFAULT_ARCH_OPTIONS` with the ones it sets (a new option edits no arch file). */
export function archOptions(overrides: Partial<ArchOptions> = {}): ArchOptions {
  return { ...DEFAULT_ARCH_OPTIONS, ...overrides };
}

/** YaRN rope scaling parameters (`rope.scaling.type = yarn`). */
export interface YarnConfig {
  readonly extFactor: number;
  readonly attnFactor: number;
  readonly betaFast: number;
  readonly betaSlow: number;
  readonly nCtxOrig: number;
}

/** Hyper-parameters of a loaded model. */
export interface ModelConfig extends ArchOptions {
  /** `general.architecture`. */
  readonly arch: string;
  /** `general.name`, or '' when absent. */
  readonly name: string;
  /** Rows of the embedding table (filled from `token_embd.weight` at load; the vocab length here). */
  readonly vocabSize: number;
  /** `{arch}.context_length`: the context the model was trained for (0 when the file does not say). Not the KV size. */
  readonly trainContextLength: number;
  /** n_embd. */
  readonly embeddingLength: number;
  readonly nLayers: number;
  /** Query heads: the most of any layer (activation buffers are sized by it). */
  readonly nHeads: number;
  /** Query heads per layer ([nLayers]; `attention.head_count` as one value or one per layer). */
  readonly layerHeads: readonly number[];
  /** KV heads: the most of any layer. */
  readonly nKvHeads: number;
  /**
   * KV heads per layer ([nLayers]; `attention.head_count_kv` as one value or one per layer, llama.cpp
   * `get_key_or_arr`). 0 marks a layer without KV of its own (recurrent layers), which no architecture runs yet.
   */
  readonly layerKvHeads: readonly number[];
  /** Width of one attention head (`attention.key_length`, default n_embd / n_head). */
  readonly headDim: number;
  /** Head width of sliding-window layers (`attention.key_length_swa`, default headDim; llama.cpp `n_embd_head_k_swa`). */
  readonly headDimSwa: number;
  /** n_ff: the widest FFN of any layer. */
  readonly ffnDim: number;
  /** FFN width per layer ([nLayers]; `feed_forward_length` as one value or one per layer). */
  readonly layerFfnDims: readonly number[];
  /** RMSNorm epsilon. */
  readonly normEps: number;
  /** Dimensions rotated per head (`rope.dimension_count`, default headDim). */
  readonly ropeDims: number;
  /** Dimensions rotated per head on sliding-window layers (`rope.dimension_count_swa`, default ropeDims). */
  readonly ropeDimsSwa: number;
  /** `rope.freq_base` (default 10000). */
  readonly ropeTheta: number;
  /** 1 / `rope.scaling.factor` for linear and YaRN scaling, else 1. */
  readonly ropeFreqScale: number;
  /** Present when `rope.scaling.type = yarn`. */
  readonly ropeYarn: YarnConfig | null;
  /**
   * Rope base and scale of sliding-window layers (gemma3 local layers), or null to use the global ones.
   * `withYarn`: they also take `ropeYarn` (llama.cpp passes the context's ext_factor and attn_factor to them: gemma3),
   * so `rope.scaling.attn_factor` scales them too; otherwise plain rope (olmo2 passes 0 and 1).
   */
  readonly ropeSwa: { readonly theta: number; readonly freqScale: number; readonly withYarn?: boolean } | null;
  /** Keys farther back than this many positions are invisible on sliding layers; 0 = no sliding window. */
  readonly slidingWindow: number;
  /** Which layers use the sliding window ([nLayers]). */
  readonly slidingLayers: readonly boolean[];
  /** Layers without rope, whose positions enter only through the causal mask (NoPE; smollm3) ([nLayers]). */
  readonly noRopeLayers: readonly boolean[];
  /** Multiplier of q·k (llama.cpp `f_attention_scale`, default 1/√headDim). */
  readonly attentionScale: number;
  /** Attention-logit soft-cap (gemma2), 0 = off. */
  readonly attnSoftcap: number;
  /** Final-logit soft-cap (gemma2), 0 = off. */
  readonly finalSoftcap: number;
  /** Experts of a mixture-of-experts FFN, or null for a dense model. */
  readonly moe: MoeConfig | null;
  /** Multiplier of the token embeddings (√n_embd for gemma, `embedding_scale` for granite), 1 = none. */
  readonly embeddingScale: number;
  /** Multiplier of each sub-block's output before its residual add (granite `residual_scale`), 1 = none. */
  readonly residualScale: number;
  /** Multiplier of the logits (granite: 1 / `logit_scale`), 1 = none. */
  readonly logitScale: number;
  /**
   * Attention temperature (mistral3, llama 4): q of the token at position p is multiplied by
   * 1 + scale · ln(⌊p / floor⌋ + 1); null = off.
   */
  readonly attnTemperature: { readonly scale: number; readonly floor: number } | null;
  /** Layers whose token mixer is a short gated convolution instead of attention (lfm2) ([nLayers]). */
  readonly shortConvLayers: readonly boolean[];
  /** Taps of the short convolution (`shortconv.l_cache`); 0 when no layer has one. */
  readonly shortConvWidth: number;
  /**
   * The layer whose KV cache each layer attends over ([nLayers]): its own index, or an earlier layer's for a layer
   * that reuses that layer's KV and projects no K/V of its own (gemma4 `attention.shared_kv_layers`).
   */
  readonly kvSources: readonly number[];
  /** Width of each layer's per-layer token embedding (gemma4 `embedding_length_per_layer_input`); 0 = none. */
  readonly perLayerEmbd: number;
  /** How `embeddings` pools the final hidden states (`pooling_type`; 'none' when the file does not say). */
  readonly poolingType: PoolingType;
  /** Whether a token sees only earlier positions (`attention.causal`, default true; false for encoders). */
  readonly causalAttention: boolean;
  /** Layers whose token mixer is a gated DeltaNet instead of attention (qwen35) ([nLayers]). */
  readonly deltaNetLayers: readonly boolean[];
  /** Geometry of the DeltaNet layers (`ssm.*` keys); null when no layer has one. */
  readonly deltaNet: DeltaNetDims | null;
  /** AltUp streams, LAuReL and activation sparsity (gemma3n), or null. */
  readonly altup: AltUpConfig | null;
  /** The q projection also yields a per-head output gate, [q | gate] per head; attention output × sigmoid(gate) (qwen35). */
  readonly attnOutputGate: boolean;
  /** Layers whose token mixer is Mamba-2 instead of attention (granitehybrid) ([nLayers]). */
  readonly mamba2Layers: readonly boolean[];
  /** Geometry of the Mamba-2 layers (`ssm.*` keys); null when no layer has one. */
  readonly mamba2: Mamba2Dims | null;
  /** The `mamba2Layers` are attention layers that also run a Mamba-2 mixer on the same normed input (falcon-h1). */
  readonly mamba2Parallel: boolean;
  /** Layers that are only an ungated relu² MLP, no token mixer (nemotron_h) ([nLayers]). */
  readonly mlpLayers: readonly boolean[];
  /** Multi-stream rope sections (qwen2vl M-RoPE, qwen3vl interleaved; `rope-sections.ts`); absent: one position. */
  readonly ropeMulti?: RopeSections;
  /**
   * Layers after which embedding-row input adds its next n_embd block (qwen3vl `n_deepstack_layers`): image rows
   * are then n_embd · (1 + deepstackLayers) wide; token rows add nothing. Absent: 0.
   */
  readonly deepstackLayers?: number;
}

/** Pooling of the final hidden states into one vector per sequence (llama.cpp `llama_pooling_type`). */
export type PoolingType = 'none' | 'mean' | 'cls' | 'last' | 'rank';

/** llama.cpp's `pooling_type` enum values, in order (0 = none … 4 = rank). */
const POOLING_TYPES: readonly PoolingType[] = ['none', 'mean', 'cls', 'last', 'rank'];

/** `<arch>.pooling_type` as a `PoolingType` ('none' when absent). */
function readPoolingType(r: MetadataReader): PoolingType {
  const key = r.archKey('pooling_type');
  const id = r.count(key, 0);
  const type = POOLING_TYPES[id];
  if (type === undefined) {
    throw new LlmError(
      'gguf-invalid',
      `reading model config: '${key}' = ${id} is not a pooling type (0 none, 1 mean, 2 cls, 3 last, 4 rank)`,
      { details: { key, value: id } },
    );
  }
  return type;
}

/** The metadata reader of model configuration: `gguf-invalid` errors in the context 'reading model config'. */
export function modelMetadata(meta: Readonly<Record<string, GgufValue>>, arch: string): MetadataReader {
  return new MetadataReader(meta, { code: 'gguf-invalid', context: 'reading model config' }, arch);
}

/** Tokens in the vocabulary according to the metadata (the embedding table is checked against it at load). */
function readVocabSize(r: MetadataReader): number {
  return (
    r.arrayLength('tokenizer.ggml.tokens') ?? r.boundedCount(r.archKey('vocab_size'), 0, 0, L.maxVocab, 'maxVocab')
  );
}

/**
 * Rope scaling as llama.cpp applies it (`rope.scaling.*`, legacy `rope.scale_linear`; llama-context.cpp): type 'none'
 * never scales; linear/longrope scale frequencies by 1/factor; YaRN also blends interpolation and extrapolation.
 * `rope.scaling.attn_factor` multiplies cos/sin for every type; for YaRN llama.cpp divides it by
 * mscale(factor, yarn_log_multiplier) and ggml multiplies it by 1 + 0.1·ln(factor) (done in the rope op).
 */
function readRopeScaling(
  r: MetadataReader,
  contextLength: number,
  yarnKeys: boolean,
): { freqScale: number; yarn: YarnConfig | null } {
  const type = r.string(r.archKey('rope.scaling.type'), 'linear');
  const why = 'rope scaling';
  let factor = r.finite(r.archKey('rope.scaling.factor'), 0, { min: 0 }, why);
  if (factor === 0) factor = r.finite(r.archKey('rope.scale_linear'), 0, { min: 0 }, why);
  const freqScale = factor === 0 || type === 'none' ? 1 : 1 / factor;
  if (!Number.isFinite(freqScale)) {
    throw new LlmError(
      'gguf-invalid',
      `reading model config: rope scaling factor ${factor} is too small; the model file is broken`,
      {
        details: { key: r.archKey('rope.scaling.factor'), value: factor },
      },
    );
  }
  const attnFactor = r.finite(r.archKey('rope.scaling.attn_factor'), 1, { min: 0, exclusiveMin: true }, why);
  const yarnBase = {
    betaFast: yarnKeys ? r.finite(r.archKey('rope.scaling.yarn_beta_fast'), 32, {}, why) : 32,
    betaSlow: yarnKeys ? r.finite(r.archKey('rope.scaling.yarn_beta_slow'), 1, {}, why) : 1,
    // 0 means unset, as in llama.cpp's context (n_ctx_orig_yarn falls back to the training context).
    nCtxOrig:
      r.boundedCount(
        r.archKey('rope.scaling.original_context_length'),
        contextLength,
        0,
        L.maxContextLength,
        'maxContextLength',
      ) || contextLength,
  };
  if (type === 'none' || type === 'linear' || type === 'longrope') {
    // Magnitude scaling without YaRN's ramp: an extFactor-0 YaRN block carries attn_factor to the rope op.
    return { freqScale, yarn: attnFactor === 1 ? null : { ...yarnBase, extFactor: 0, attnFactor } };
  }
  if (type === 'yarn') {
    const logMul = yarnKeys ? r.finite(r.archKey('rope.scaling.yarn_log_multiplier'), 0, {}, why) : 0;
    const f = 1 / freqScale;
    const mscale = (m: number): number => (f <= 1 ? 1 : 0.1 * m * Math.log(f) + 1);
    return {
      freqScale,
      yarn: { ...yarnBase, extFactor: 1, attnFactor: logMul !== 0 ? attnFactor / mscale(logMul) : attnFactor },
    };
  }
  throw new LlmError(
    'unsupported-arch',
    `reading model config: rope scaling type '${type}' is not supported (none, linear, yarn, longrope are)`,
    {
      details: { key: r.archKey('rope.scaling.type'), value: type },
    },
  );
}

/**
 * Reads the hyper-parameters shared by llama-like architectures, with llama.cpp's defaults:
 * head_count_kv = head_count (one value or one per layer), key_length = n_embd / n_head, key_length_swa = key_length,
 * rope.dimension_count = key_length (its _swa twin likewise),
 * rope.freq_base = 10000, attention scale 1/√key_length, no sliding window, no soft-caps.
 */
export function readStandardConfig(
  meta: Readonly<Record<string, GgufValue>>,
  arch: string,
  options: ArchOptions,
): ModelConfig {
  const r = modelMetadata(meta, arch);
  const keyEmbd = r.archKey('embedding_length');
  const keyHeads = r.archKey('attention.head_count');
  const keyKvHeads = r.archKey('attention.head_count_kv');
  const keyKeyLength = r.archKey('attention.key_length');
  const keyValueLength = r.archKey('attention.value_length');
  const embeddingLength = r.boundedCount(keyEmbd, undefined, 1, L.maxEmbedding, 'maxEmbedding');
  // Every layer-sized allocation below (and the per-layer arrays) is bounded by this check first.
  const nLayers = r.boundedCount(r.archKey('block_count'), undefined, 1, L.maxLayers, 'maxLayers');
  // llama.cpp reads these per layer (get_key_or_arr): one value, or an array of exactly one entry per layer.
  const layerHeads = r.boundedCounts(keyHeads, undefined, nLayers, 1, L.maxHeads, 'maxHeads');
  // 0 KV heads is llama.cpp's mark of a layer without attention (recurrent layers of hybrid models).
  const layerKvHeads = r.has(keyKvHeads)
    ? r.boundedCounts(keyKvHeads, undefined, nLayers, 0, L.maxHeads, 'maxHeads')
    : layerHeads;
  const layerFfnDims = r.boundedCounts(
    r.archKey('feed_forward_length'),
    undefined,
    nLayers,
    1,
    L.maxFeedForward,
    'maxFeedForward',
  );
  const moe = readMoeConfig(r, arch, options.moeRouting, nLayers, layerFfnDims);
  for (let il = 0; il < nLayers; il++) {
    const heads = layerHeads[il];
    const kvHeads = layerKvHeads[il];
    const perLayer = nLayers > 1 && (layerHeads.some((h) => h !== heads) || layerKvHeads.some((h) => h !== kvHeads));
    if (kvHeads === 0 && layerKvHeads.every((h) => h === 0)) {
      throw new LlmError(
        'gguf-invalid',
        `reading model config: '${keyKvHeads}' is 0 on every layer: an attention model without KV heads; the model file is broken`,
        { details: { key: keyKvHeads, value: 0 } },
      );
    }
    if (kvHeads === 0) {
      throw new LlmError(
        'unsupported-arch',
        `reading model config: '${keyKvHeads}' is 0 on layer ${il}: a layer without attention (recurrent) is not supported yet`,
        { details: { key: keyKvHeads, layer: il } },
      );
    }
    if (heads % kvHeads !== 0) {
      throw new LlmError(
        'gguf-invalid',
        `reading model config: '${keyHeads}' = ${heads} heads cannot be grouped over '${keyKvHeads}' = ${kvHeads} KV heads (not a divisor)` +
          (perLayer ? ` on layer ${il}` : ''),
        { details: { key: keyKvHeads, nHeads: heads, nKvHeads: kvHeads, layer: il } },
      );
    }
  }
  const nHeads = layerHeads[0];
  let headDim: number;
  if (r.has(keyKeyLength)) {
    headDim = r.boundedCount(keyKeyLength, undefined, 1, L.maxHeadDim, 'maxHeadDim');
  } else {
    if (embeddingLength % nHeads !== 0) {
      throw new LlmError(
        'gguf-invalid',
        `reading model config: '${keyEmbd}' = ${embeddingLength} is not a multiple of '${keyHeads}' = ${nHeads}, so the head size ` +
          `${keyEmbd} / head_count is not an integer; the model file is broken`,
        { details: { key: keyHeads, embeddingLength, nHeads } },
      );
    }
    headDim = embeddingLength / nHeads;
  }
  const valueDim = r.boundedCount(keyValueLength, headDim, 1, L.maxHeadDim, 'maxHeadDim');
  const headDimSwa = r.boundedCount(`${keyKeyLength}_swa`, headDim, 1, L.maxHeadDim, 'maxHeadDim');
  const valueDimSwa = r.boundedCount(`${keyValueLength}_swa`, headDimSwa, 1, L.maxHeadDim, 'maxHeadDim');
  if (valueDim !== headDim || valueDimSwa !== headDimSwa) {
    throw new LlmError(
      'unsupported-arch',
      `reading model config: key head size ${valueDim !== headDim ? headDim : headDimSwa} ≠ value head size ` +
        `${valueDim !== headDim ? valueDim : valueDimSwa} ('${keyKeyLength}' / '${keyValueLength}'${valueDim !== headDim ? '' : ' _swa'}) is not supported`,
      {
        details: { headDim, valueDim, headDimSwa, valueDimSwa },
      },
    );
  }
  const contextLength = r.boundedCount(r.archKey('context_length'), 2048, 0, L.maxContextLength, 'maxContextLength');
  const ropeDims = r.count(r.archKey('rope.dimension_count'), headDim);
  const ropeDimsSwa = r.count(r.archKey('rope.dimension_count_swa'), ropeDims); // llama.cpp: n_rot_swa = n_rot_full
  for (const [key, dims, size] of [
    ['rope.dimension_count', ropeDims, headDim],
    ['rope.dimension_count_swa', ropeDimsSwa, headDimSwa],
  ] as const) {
    if (dims > size || dims % 2 !== 0) {
      throw new LlmError(
        'gguf-invalid',
        `reading model config: '${r.archKey(key)}' = ${dims} must be even and ≤ head size ${size}`,
        {
          details: { key: r.archKey(key), ropeDims: dims, headDim: size },
        },
      );
    }
  }
  const scaling = readRopeScaling(r, contextLength, options.yarnKeys);
  return {
    ...options,
    arch,
    name: r.string('general.name', ''),
    vocabSize: readVocabSize(r),
    trainContextLength: contextLength,
    embeddingLength,
    nLayers,
    nHeads: Math.max(...layerHeads),
    layerHeads,
    nKvHeads: Math.max(...layerKvHeads),
    layerKvHeads,
    headDim,
    headDimSwa,
    ffnDim: Math.max(...layerFfnDims),
    layerFfnDims,
    normEps: r.finite(r.archKey('attention.layer_norm_rms_epsilon'), 1e-5, { min: 0 }, 'the RMSNorm epsilon'),
    ropeDims,
    ropeDimsSwa,
    ropeTheta: r.finite(r.archKey('rope.freq_base'), 10000, { min: 0, exclusiveMin: true }, 'the rope frequency base'),
    ropeFreqScale: scaling.freqScale,
    ropeYarn: scaling.yarn,
    ropeSwa: null,
    slidingWindow: 0,
    slidingLayers: new Array<boolean>(nLayers).fill(false),
    noRopeLayers: new Array<boolean>(nLayers).fill(false),
    attentionScale: 1 / Math.sqrt(headDim),
    attnSoftcap: 0,
    finalSoftcap: 0,
    moe,
    embeddingScale: options.scaleEmbeddings ? Math.fround(Math.sqrt(embeddingLength)) : 1,
    residualScale: 1,
    logitScale: 1,
    attnTemperature: null,
    shortConvLayers: new Array<boolean>(nLayers).fill(false),
    shortConvWidth: 0,
    kvSources: Array.from({ length: nLayers }, (_, il) => il),
    perLayerEmbd: 0,
    poolingType: readPoolingType(r),
    causalAttention: r.optionalBool(r.archKey('attention.causal')) ?? true,
    deltaNetLayers: new Array<boolean>(nLayers).fill(false),
    deltaNet: null,
    attnOutputGate: false,
    altup: null,
    mamba2Layers: new Array<boolean>(nLayers).fill(false),
    mamba2: null,
    mlpLayers: new Array<boolean>(nLayers).fill(false),
    mamba2Parallel: false,
  };
}

/**
 * Which layers slide, from `attention.sliding_window_pattern` as llama.cpp reads it (`set_swa_pattern`): a number n
 * means layer il slides iff il % n < n − 1 (every n-th layer is global), 0 that every layer slides; an array gives one
 * flag per layer. `defaultPeriod` is used when the key is absent.
 */
export function readSlidingLayers(
  meta: Readonly<Record<string, GgufValue>>,
  arch: string,
  nLayers: number,
  defaultPeriod: number,
): boolean[] {
  const r = modelMetadata(meta, arch);
  const key = r.archKey('attention.sliding_window_pattern');
  const flags = r.numberArray(key, nLayers);
  if (flags) return flags.map((f) => f !== 0);
  const period = r.boundedCount(key, defaultPeriod, 0, L.maxLayers, 'maxLayers');
  return Array.from({ length: nLayers }, (_, il) => period === 0 || il % period < period - 1);
}
