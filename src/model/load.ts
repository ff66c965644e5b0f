/**
 * `loadTransformer`: turns a parsed GGUF file into a `Transformer` on one backend. Looks the architecture up in the
 * registry, reads its config, then streams tensors one at a time from the `ByteSource` into `ops.uploadWeight`
 * (the file is never held whole in memory), splitting phi3's fused QKV and gate|up matrices by rows on the way.
 */

import type { KvType } from '../backend/kv-type.js';
import type { Ops } from '../backend/ops.js';
import { LlmError } from '../errors.js';
import type { GgufFile } from '../gguf/types.js';
import type { ByteSource } from '../io/byte-source.js';
import { loadIqGrids } from '../quant/iq-grids.js';
import { getArchitecture, layerTensorName, loadArchitecture, type TensorNames } from './arch/index.js';
import { checkConfigAgainstTensors } from './check-config.js';
import { type ModelConfig, modelMetadata } from './config.js';
import type { DeltaNetLayerWeights } from './delta-net-layer.js';
import { describeLayers } from './layer-spec.js';
import { hasIqTensors, needsFeatureKernels } from './feature-kernels.js';
import {
  type Mamba2LayerWeights,
  mamba2Slots,
  mamba2SsmSlots,
  mamba2SsmWeights,
  mamba2Weights,
} from './mamba2-layer.js';
import { type MlpLayerWeights, mlpSlots, mlpWeights } from './mlp-layer.js';
import { DEFAULT_UBATCH_SIZE, defaultContextLength } from './run-shape.js';
import { namePerLayerWeights, perLayerWeightsOf } from './per-layer-load.js';
import { altUpWeightsOf, nameAltUpWeights } from './altup-load.js';
import type { RankHead } from './pooling.js';
import type { LayerWeights, ModelWeights, ShortConvLayerWeights } from './model-weights.js';
import { moeSlots, moeWeights } from './moe-load.js';
import { loadLazyModelParts } from './lazy-model-parts.js';
import { TransformerModel } from './transformer.js';
import { type LayerSlots, denseFfnSlots, deltaNetSlots, deltaNetWeights, recurrentFfnSlots } from './layer-slots.js';
import { checkEncoderTensors } from './check-encoder.js';
import { type LoadProgress, WeightLoader, type WeightSlot } from './weight-loader.js';

/** Options of `loadTransformer`. */
export interface LoadTransformerOptions {
  /** KV positions per slot; default `defaultContextLength` (the training context, at most 4096). */
  readonly contextLength?: number;
  /** Most tokens per step; default 512 (capped at the context length). */
  readonly ubatchSize?: number;
  /** Independent sequences sharing the weights; default 1. */
  readonly nSlots?: number;
  /** KV cache element type (llama.cpp `-ctk`/`-ctv`); default: the backend's own. */
  readonly kvType?: KvType;
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: LoadProgress) => void;
  /** Bytes per piece when the backend streams weights in (`Ops.beginWeight`); default 4 MiB, whole rows, ≥ 4 rows. */
  readonly pieceBytes?: number;
}

/** Reads the configuration of a parsed GGUF file (architecture lookup + metadata), without touching tensor data. */
export function readModelConfig(gguf: GgufFile): ModelConfig {
  const archName = modelMetadata(gguf.metadata, '').string('general.architecture');
  const arch = getArchitecture(archName);
  const read = arch.config(gguf.metadata);
  // llama.cpp takes a fused gate|up expert stack in place of the two when the file has one.
  const fused = read.moe !== null && gguf.tensors.some((t) => t.name.endsWith('.ffn_gate_up_exps.weight'));
  const merged = fused && read.moe ? { ...read, moe: { ...read.moe, fusedGateUp: true } } : read;
  // llama.cpp runs every encoder through `llama_context::encode`, which always attends non-causally whatever
  // `attention.causal` says (a file without the key is still bidirectional).
  const config = arch.encoder ? { ...merged, causalAttention: false } : merged;
  if (arch.encoder) checkEncoderTensors(gguf, config);
  else checkConfigAgainstTensors(gguf, config, arch.tensors);
  const embd = gguf.tensors.find((t) => t.name === arch.tensors.tokenEmbd)!; // present and 2-D: checked above
  const rows = embd.shape[1];
  if (config.vocabSize !== 0 && config.vocabSize !== rows) {
    const key = Object.hasOwn(gguf.metadata, 'tokenizer.ggml.tokens')
      ? 'tokenizer.ggml.tokens'
      : `${archName}.vocab_size`;
    throw new LlmError(
      'gguf-invalid',
      `loading model: the vocabulary ('${key}') has ${config.vocabSize} tokens but token_embd.weight has ${rows} rows`,
      {
        details: { key, vocabSize: config.vocabSize, rows },
      },
    );
  }
  return { ...config, vocabSize: rows };
}

/** Loads every weight of `gguf` onto `ops` and returns the ready model. */
export async function loadTransformer(
  gguf: GgufFile,
  source: ByteSource,
  ops: Ops,
  options: LoadTransformerOptions = {},
): Promise<TransformerModel> {
  await loadArchitecture(gguf.metadata['general.architecture']); // an encoder's entry, to be refused as one below
  const config = readModelConfig(gguf);
  // IQ1–IQ3 tensors decode through codebook grids kept out of the main download (quant/iq-grids.ts).
  if (hasIqTensors(gguf)) await loadIqGrids();
  // So are the kernels of recurrent, MoE and AltUp layers and IQ weights (feature-kernels.ts).
  if (needsFeatureKernels(config, gguf)) await ops.loadFeatureKernels?.();
  const contextLength = options.contextLength ?? defaultContextLength(config);
  const ubatchSize = options.ubatchSize ?? DEFAULT_UBATCH_SIZE;
  const nSlots = options.nSlots ?? 1;
  checkLoadShape(contextLength, ubatchSize, nSlots);
  const names = getArchitecture(config.arch).tensors;
  const loader = new WeightLoader(gguf, source, ops, options);
  if (getArchitecture(config.arch).encoder) {
    throw new LlmError(
      'invalid-request',
      `loading model: ${config.arch} is an encoder (embeddings only, no lm head); load it with loadAnyModel (model/load-any.ts)`,
      { details: { arch: config.arch } },
    );
  }
  const c = config;
  const allHeads = c.qkNormScope === 'all-heads';

  const ropeFreqFactors = await ropeFactors(loader, gguf, names, c, contextLength);
  const rankHead = c.poolingType === 'rank' ? await rankHeadOf(loader, gguf, c) : null;
  const nPL = c.perLayerEmbd;
  const outScales: number[] = []; // per layer (`layer_output_scale`, gemma4), 1 when absent
  for (let il = 0; il < c.nLayers; il++) {
    const name = layerTensorName(names.layerOutScale, il);
    outScales.push(loader.has(name) ? (await loader.readHostF32(name, [1]))[0] : 1);
  }
  const perLayerSlots = nPL > 0 ? namePerLayerWeights(loader, names, c) : null;
  const altUpSlots = c.altup ? nameAltUpWeights(loader, c, c.altup) : null;
  // Name every weight first (shapes checked before any read), then read them all in file order.
  const tokenEmbd = loader.upload(names.tokenEmbd, [c.embeddingLength, c.vocabSize]);
  const outputNorm = loader.upload(names.outputNorm, [c.embeddingLength]);
  const output =
    !c.alwaysTied && loader.has(names.output)
      ? loader.upload(names.output, [c.embeddingLength, c.vocabSize])
      : tokenEmbd;
  const outputBias = loader.optional(names.outputBias, [c.vocabSize]);
  const layerSlots = describeLayers(c).map((spec, il): LayerSlots => {
    const n = (pattern: string): string => layerTensorName(pattern, il);
    if (spec.kind === 'shortconv') {
      const E = c.embeddingLength;
      return {
        kind: 'shortconv',
        attnNorm: loader.upload(n(names.attnNorm), [E]),
        inProj: loader.upload(n(names.shortConvInProj), [E, 3 * E]),
        conv: loader.upload(n(names.shortConv), [spec.convWidth, E]),
        outProj: loader.upload(n(names.shortConvOutProj), [E, E]),
        ffnNorm: loader.upload(n(names.ffnNorm), [E]),
        ...recurrentFfnSlots(loader, names, c, il, spec),
      };
    }
    if (spec.kind === 'deltanet') {
      return {
        ...deltaNetSlots(loader, names, il, c.embeddingLength, spec),
        ...recurrentFfnSlots(loader, names, c, il, spec),
      };
    }
    if (spec.kind === 'mlp') {
      const moe = spec.moe && moeSlots(loader, names, c, il, spec.moe, spec.ffnDim); // nemotron_h_moe's experts
      return { kind: 'mlp', ...mlpSlots(loader, names, il, c.embeddingLength, spec.ffnDim, moe) };
    }
    if (spec.kind === 'mamba2') {
      return {
        kind: 'mamba2',
        mixer: mamba2Slots(loader, names, il, c.embeddingLength, spec),
        dense: spec.moe || spec.ffnDim === 0 ? null : denseFfnSlots(loader, names, c, il, spec.ffnDim),
        moe: spec.moe ? moeSlots(loader, names, c, il, spec.moe, spec.ffnDim) : null,
      };
    }
    const ownKv = spec.kvSource === il; // a layer reading an earlier layer's KV has no K/V (its file may)
    const qRows = spec.nHeads * spec.headDim; // per-layer geometry
    const kvRows = spec.nKvHeads * spec.headDim;
    const ffnDim = spec.ffnDim;
    const [wq, wk, wv] = c.fusedQkv
      ? loader.uploadSplit(n(names.attnQkv), c.embeddingLength, [
          [n(names.attnQ), qRows],
          [n(names.attnK), kvRows],
          [n(names.attnV), kvRows],
        ])
      : [
          loader.upload(n(names.attnQ), [c.embeddingLength, c.attnOutputGate ? 2 * qRows : qRows]),
          ownKv ? loader.upload(n(names.attnK), [c.embeddingLength, kvRows]) : null,
          !ownKv
            ? null
            : c.valueNorm
              ? loader.optional(n(names.attnV), [c.embeddingLength, kvRows])
              : loader.upload(n(names.attnV), [c.embeddingLength, kvRows]),
        ];
    const dense = spec.moe || ffnDim === 0 ? null : denseFfnSlots(loader, names, c, il, ffnDim); // 0: no FFN (nemotron_h)
    return {
      kind: 'attention',
      attnNorm: c.preNorms ? loader.upload(n(names.attnNorm), [c.embeddingLength]) : null,
      wq,
      wk,
      wv,
      bq: loader.optional(n(names.attnQBias), [qRows]),
      bk: loader.optional(n(names.attnKBias), [kvRows]),
      bv: loader.optional(n(names.attnVBias), [kvRows]),
      qNorm: c.qkNorm ? loader.upload(n(names.attnQNorm), [allHeads ? qRows : spec.headDim]) : null,
      kNorm: c.qkNorm && ownKv ? loader.upload(n(names.attnKNorm), [allHeads ? kvRows : spec.headDim]) : null,
      wo: loader.upload(n(names.attnOut), [qRows, c.embeddingLength]),
      bo: c.attnOutBias ? loader.optional(n(names.attnOutBias), [c.embeddingLength]) : null,
      sinks: c.attnSinks ? loader.upload(n(names.attnSinks), [spec.nHeads]) : null,
      postAttnNorm: c.postNorms ? loader.upload(n(names.postAttnNorm), [c.embeddingLength]) : null,
      ffnNorm: c.preNorms && (ffnDim > 0 || spec.moe) ? loader.upload(n(names.ffnNorm), [c.embeddingLength]) : null,
      gate: dense?.gate ?? null,
      up: dense?.up ?? null,
      down: dense?.down ?? null,
      moe: spec.moe ? moeSlots(loader, names, c, il, spec.moe, ffnDim) : null,
      postFfnNorm: c.postNorms ? loader.upload(n(names.postFfnNorm), [c.embeddingLength]) : null,
      perLayer:
        nPL > 0
          ? {
              gate: loader.upload(n(names.perLayerInpGate), [c.embeddingLength, nPL]),
              proj: loader.upload(n(names.perLayerProj), [nPL, c.embeddingLength]),
              postNorm: loader.upload(n(names.perLayerPostNorm), [c.embeddingLength]),
            }
          : null,
      outScale: outScales[il],
      ssm: spec.ssm && mamba2SsmSlots(loader, names, il, c.embeddingLength, spec.ssm, true),
    };
  });
  await loader.loadAll();
  const perLayer = perLayerSlots && perLayerWeightsOf(perLayerSlots, await perLayerSlots.tables());
  const get = (slot: WeightSlot | null) => slot?.get() ?? null;
  const layers = layerSlots.map(
    (l): LayerWeights | ShortConvLayerWeights | DeltaNetLayerWeights | Mamba2LayerWeights | MlpLayerWeights =>
      l.kind === 'mlp'
        ? mlpWeights(l)
        : l.kind === 'mamba2'
          ? mamba2Weights(l.mixer, {
              gate: get(l.dense?.gate ?? null),
              up: get(l.dense?.up ?? null),
              down: get(l.dense?.down ?? null),
              moe: l.moe && moeWeights(l.moe),
            })
          : l.kind === 'deltanet'
            ? deltaNetWeights(l)
            : l.kind === 'shortconv'
              ? {
                  kind: 'shortconv',
                  attnNorm: l.attnNorm.get(),
                  inProj: l.inProj.get(),
                  conv: l.conv.get(),
                  outProj: l.outProj.get(),
                  ffnNorm: l.ffnNorm.get(),
                  gate: get(l.gate),
                  up: get(l.up),
                  down: get(l.down),
                  moe: l.moe && moeWeights(l.moe),
                  postFfnNorm: null,
                }
              : {
                  attnNorm: get(l.attnNorm),
                  wq: l.wq.get(),
                  wk: get(l.wk),
                  wv: get(l.wv),
                  bq: get(l.bq),
                  bk: get(l.bk),
                  bv: get(l.bv),
                  qNorm: get(l.qNorm),
                  kNorm: get(l.kNorm),
                  wo: l.wo.get(),
                  bo: get(l.bo),
                  sinks: get(l.sinks),
                  postAttnNorm: get(l.postAttnNorm),
                  ffnNorm: get(l.ffnNorm),
                  gate: get(l.gate),
                  up: get(l.up),
                  down: get(l.down),
                  moe: l.moe && moeWeights(l.moe),
                  postFfnNorm: get(l.postFfnNorm),
                  perLayer: l.perLayer && {
                    gate: l.perLayer.gate.get(),
                    proj: l.perLayer.proj.get(),
                    postNorm: l.perLayer.postNorm.get(),
                  },
                  outScale: l.outScale,
                  ssm: l.ssm && mamba2SsmWeights(l.ssm),
                },
  );
  const weights: ModelWeights = {
    tokenEmbd: tokenEmbd.get(),
    outputNorm: outputNorm.get(),
    output: output.get(),
    outputBias: get(outputBias),
    ropeFreqFactors,
    perLayer,
    layers,
    rankHead,
    altUp: altUpSlots && altUpWeightsOf(altUpSlots),
  };
  const lazy = await loadLazyModelParts(config, !!weights.altUp);
  const shape = { contextLength, ubatchSize, nSlots, kvType: options.kvType };
  return new TransformerModel(config, weights, ops, shape, lazy);
}

/** `invalid-request` unless the run shape's counts are positive integers. */
export function checkLoadShape(contextLength: number, ubatchSize: number, nSlots: number): void {
  for (const [key, v] of [
    ['contextLength', contextLength],
    ['ubatchSize', ubatchSize],
    ['nSlots', nSlots],
  ] as const) {
    if (!(Number.isSafeInteger(v) && v > 0)) {
      throw new LlmError('invalid-request', `loading model: option ${key} must be a positive integer, got ${v}`, {
        details: { [key]: v },
      });
    }
  }
}

/**
 * Rope frequency divisors: `rope_freqs.weight` (llama3), or LongRoPE's short/long factors chosen as llama.cpp does
 * (long when the context exceeds the original training context). Kept on the host: rope params carry them.
 */
async function ropeFactors(
  loader: WeightLoader,
  gguf: GgufFile,
  names: TensorNames,
  c: ModelConfig,
  contextLength: number,
): Promise<Float32Array | null> {
  let name: string | null = null;
  if (loader.has(names.ropeFreqs)) name = names.ropeFreqs;
  else if (loader.has(names.ropeFactorsShort) || loader.has(names.ropeFactorsLong)) {
    const r = modelMetadata(gguf.metadata, c.arch);
    const orig = r.count(r.archKey('rope.scaling.original_context_length'), c.trainContextLength);
    name = contextLength > orig && loader.has(names.ropeFactorsLong) ? names.ropeFactorsLong : names.ropeFactorsShort;
  }
  if (name === null) return null;
  // gemma4 applies them to global layers only, one per pair of the global head (llama.cpp n_embd_head / 2).
  return loader.readHostF32(name, [(c.globalRopeFreqs ? c.headDim : c.ropeDims) / 2]);
}

/**
 * The classifier of a rank-pooling model, dequantized on the host (`cls.output.weight` [n_embd, n_cls_out] and its
 * bias); null when the file has none. A dense `cls.weight` pre-head (BERT-style rerankers) is not supported.
 */
async function rankHeadOf(loader: WeightLoader, gguf: GgufFile, c: ModelConfig): Promise<RankHead | null> {
  if (loader.has('cls.weight'))
    throw new LlmError('unsupported-arch', `loading model: this ${c.arch} reranker's dense cls head is not supported`);
  if (!loader.has('cls.output.weight')) return null;
  const nOut = gguf.tensors.find((t) => t.name === 'cls.output.weight')?.shape[1] ?? 1;
  const weight = await loader.readHostF32('cls.output.weight', [c.embeddingLength, nOut]); // [nOut, nEmbd]
  const bias = loader.has('cls.output.bias') ? await loader.readHostF32('cls.output.bias', [nOut]) : null;
  const qwen3 = c.arch === 'qwen3';
  return { weight, bias, nOut, lastToken: qwen3, softmax: qwen3 };
}
