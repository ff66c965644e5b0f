/**
 * `loadTransformer`: turns a parsed GGUF file into a `Transformer` on one backend. Looks the architecture up in the
 * registry, reads its config, then streams tensors one at a time from the `ByteSource` into `ops.uploadWeight`
 * (the file is never held whole in memory), splitting phi3's fused QKV and gate|up matrices by rows on the way.
 */

import type { KvType } from '../backend/kv-type.js';
import type { Ops } from '../backend/ops.js';
import { LlmError } from '../errors.js';
import { GgmlType, type GgufFile } from '../gguf/types.js';
import type { ByteSource } from '../io/byte-source.js';
import { getQuantType } from '../quant/index.js';
import { getArchitecture, layerTensorName, type TensorNames } from './arch/index.js';
import { checkConfigAgainstTensors } from './check-config.js';
import { type ModelConfig, modelMetadata } from './config.js';
import type { DeltaNetLayerWeights } from './delta-net-layer.js';
import { type DeltaNetLayerSpec, describeLayers } from './layer-spec.js';
import { DEFAULT_UBATCH_SIZE, defaultContextLength } from './run-shape.js';
import { type LayerWeights, type ModelWeights, type ShortConvLayerWeights, TransformerModel } from './transformer.js';
import { type LoadProgress, WeightLoader, type WeightSlot } from './weight-loader.js';

/** A layer's weights named before any is read: every attention weight, or a short-convolution layer's. */
type LayerSlots =
  | ({ readonly kind: 'attention' } & {
      readonly [K in keyof LayerWeights]: WeightSlot | (null extends LayerWeights[K] ? null : never);
    })
  | {
      readonly kind: 'shortconv';
      readonly attnNorm: WeightSlot;
      readonly inProj: WeightSlot;
      readonly conv: WeightSlot;
      readonly outProj: WeightSlot;
      readonly ffnNorm: WeightSlot;
      readonly gate: WeightSlot;
      readonly up: WeightSlot;
      readonly down: WeightSlot;
    }
  | ({ readonly kind: 'deltanet' } & {
      readonly [K in Exclude<keyof DeltaNetLayerWeights, 'kind' | 'postFfnNorm'>]: WeightSlot;
    });

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
  const config = arch.config(gguf.metadata);
  checkConfigAgainstTensors(gguf, config, arch.tensors);
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
  const config = readModelConfig(gguf);
  const contextLength = options.contextLength ?? defaultContextLength(config);
  const ubatchSize = options.ubatchSize ?? DEFAULT_UBATCH_SIZE;
  const nSlots = options.nSlots ?? 1;
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
  const names = getArchitecture(config.arch).tensors;
  const loader = new WeightLoader(gguf, source, ops, options);
  const c = config;
  const allHeads = c.qkNormScope === 'all-heads';

  const ropeFreqFactors = await ropeFactors(loader, gguf, names, c, contextLength);
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
        gate: loader.upload(n(names.ffnGate), [E, spec.ffnDim]),
        up: loader.upload(n(names.ffnUp), [E, spec.ffnDim]),
        down: loader.upload(n(names.ffnDown), [spec.ffnDim, E]),
      };
    }
    if (spec.kind === 'deltanet') return deltaNetSlots(loader, names, il, c.embeddingLength, spec);
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
          loader.upload(n(names.attnK), [c.embeddingLength, kvRows]),
          loader.upload(n(names.attnV), [c.embeddingLength, kvRows]),
        ];
    const [gate, up] = c.fusedGateUp
      ? loader.uploadSplit(n(names.ffnUp), c.embeddingLength, [
          [n(names.ffnGate), ffnDim],
          [n(names.ffnUp), ffnDim],
        ])
      : [
          loader.upload(n(names.ffnGate), [c.embeddingLength, ffnDim]),
          loader.upload(n(names.ffnUp), [c.embeddingLength, ffnDim]),
        ];
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
      kNorm: c.qkNorm ? loader.upload(n(names.attnKNorm), [allHeads ? kvRows : spec.headDim]) : null,
      wo: loader.upload(n(names.attnOut), [qRows, c.embeddingLength]),
      bo: c.attnOutBias ? loader.optional(n(names.attnOutBias), [c.embeddingLength]) : null,
      postAttnNorm: c.postNorms ? loader.upload(n(names.postAttnNorm), [c.embeddingLength]) : null,
      ffnNorm: c.preNorms ? loader.upload(n(names.ffnNorm), [c.embeddingLength]) : null,
      gate,
      up,
      down: loader.upload(n(names.ffnDown), [ffnDim, c.embeddingLength]),
      postFfnNorm: c.postNorms ? loader.upload(n(names.postFfnNorm), [c.embeddingLength]) : null,
    };
  });
  await loader.loadAll();
  const get = (slot: WeightSlot | null) => slot?.get() ?? null;
  const layers = layerSlots.map((l): LayerWeights | ShortConvLayerWeights | DeltaNetLayerWeights =>
    l.kind === 'deltanet'
      ? deltaNetWeights(l)
      : l.kind === 'shortconv'
        ? {
            kind: 'shortconv',
            attnNorm: l.attnNorm.get(),
            inProj: l.inProj.get(),
            conv: l.conv.get(),
            outProj: l.outProj.get(),
            ffnNorm: l.ffnNorm.get(),
            gate: l.gate.get(),
            up: l.up.get(),
            down: l.down.get(),
            postFfnNorm: null,
          }
        : {
            attnNorm: get(l.attnNorm),
            wq: l.wq.get(),
            wk: l.wk.get(),
            wv: l.wv.get(),
            bq: get(l.bq),
            bk: get(l.bk),
            bv: get(l.bv),
            qNorm: get(l.qNorm),
            kNorm: get(l.kNorm),
            wo: l.wo.get(),
            bo: get(l.bo),
            postAttnNorm: get(l.postAttnNorm),
            ffnNorm: get(l.ffnNorm),
            gate: l.gate.get(),
            up: l.up.get(),
            down: l.down.get(),
            postFfnNorm: get(l.postFfnNorm),
          },
  );
  const weights: ModelWeights = {
    tokenEmbd: tokenEmbd.get(),
    outputNorm: outputNorm.get(),
    output: output.get(),
    outputBias: get(outputBias),
    ropeFreqFactors,
    layers,
  };
  return new TransformerModel(config, weights, ops, { contextLength, ubatchSize, nSlots, kvType: options.kvType });
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
  const { info, bytes } = await loader.readHost(name, [c.ropeDims / 2]);
  const out = new Float32Array(info.nElements); // [ropeDims / 2]
  if (info.type === GgmlType.F32) new Uint8Array(out.buffer).set(bytes.subarray(0, out.byteLength));
  else getQuantType(info.type).dequantizeRow(bytes, out, out.length);
  return out;
}

/** Names (and shape-checks) the weights of a gated DeltaNet layer (qwen35), as llama.cpp's `load_block_trunk`. */
function deltaNetSlots(
  loader: WeightLoader,
  names: TensorNames,
  il: number,
  E: number,
  spec: DeltaNetLayerSpec,
): LayerSlots {
  const n = (pattern: string): string => layerTensorName(pattern, il);
  const d = spec.dims;
  const vCols = d.nVHeads * d.headV;
  const convDim = 2 * d.nKHeads * d.headK + vCols;
  return {
    kind: 'deltanet',
    attnNorm: loader.upload(n(names.attnNorm), [E]),
    qkv: loader.upload(n(names.attnQkv), [E, convDim]),
    z: loader.upload(n(names.ssmGate), [E, vCols]),
    beta: loader.upload(n(names.ssmBeta), [E, d.nVHeads]),
    alpha: loader.upload(n(names.ssmAlpha), [E, d.nVHeads]),
    conv: loader.upload(n(names.ssmConv1d), [d.convWidth, convDim]),
    dtBias: loader.upload(n(names.ssmDt), [d.nVHeads]),
    a: loader.upload(n(names.ssmA), [d.nVHeads]),
    norm: loader.upload(n(names.ssmNorm), [d.headV]),
    outProj: loader.upload(n(names.ssmOut), [vCols, E]),
    ffnNorm: loader.upload(n(names.ffnNorm), [E]),
    gate: loader.upload(n(names.ffnGate), [E, spec.ffnDim]),
    up: loader.upload(n(names.ffnUp), [E, spec.ffnDim]),
    down: loader.upload(n(names.ffnDown), [spec.ffnDim, E]),
  };
}

/** The uploaded weights of a DeltaNet layer's slots. */
function deltaNetWeights(l: Extract<LayerSlots, { kind: 'deltanet' }>): DeltaNetLayerWeights {
  return {
    kind: 'deltanet',
    attnNorm: l.attnNorm.get(),
    qkv: l.qkv.get(),
    z: l.z.get(),
    beta: l.beta.get(),
    alpha: l.alpha.get(),
    conv: l.conv.get(),
    dtBias: l.dtBias.get(),
    a: l.a.get(),
    norm: l.norm.get(),
    outProj: l.outProj.get(),
    ffnNorm: l.ffnNorm.get(),
    gate: l.gate.get(),
    up: l.up.get(),
    down: l.down.get(),
    postFfnNorm: null,
  };
}
