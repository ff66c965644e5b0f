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
import { IQ_GRID_TYPES, loadIqGrids } from '../quant/iq-grids.js';
import { getArchitecture, layerTensorName, type TensorNames } from './arch/index.js';
import { checkConfigAgainstTensors } from './check-config.js';
import { type ModelConfig, modelMetadata } from './config.js';
import type { DeltaNetLayerWeights } from './delta-net-layer.js';
import { type DeltaNetLayerSpec, describeLayers, type MoeLayerSpec } from './layer-spec.js';
import { DEFAULT_UBATCH_SIZE, defaultContextLength } from './run-shape.js';
import { namePerLayerWeights, perLayerWeightsOf } from './per-layer-load.js';
import type { RankHead } from './pooling.js';
import type {
  DenseFfnWeights,
  LayerWeights,
  ModelWeights,
  MoeWeights,
  ShortConvLayerWeights,
} from './model-weights.js';
import { TransformerModel } from './transformer.js';
import { checkEncoderTensors } from './encoder-weights.js';
import { type LoadProgress, WeightLoader, type WeightSlot } from './weight-loader.js';

/** A layer's weights named before any is read: every attention weight, or a short-convolution layer's. */
type LayerSlots =
  | ({ readonly kind: 'attention'; readonly moe: MoeSlots | null } & {
      readonly [K in Exclude<keyof LayerWeights, 'moe' | 'perLayer' | 'outScale'>]:
        | WeightSlot
        | (null extends LayerWeights[K] ? null : never);
    } & {
      readonly perLayer: { readonly gate: WeightSlot; readonly proj: WeightSlot; readonly postNorm: WeightSlot } | null;
      readonly outScale: number;
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

/** A layer's dense gated FFN, named before it is read. */
type DenseFfnSlots = { readonly [K in keyof DenseFfnWeights]: WeightSlot };

/** A MoE layer's router, expert stacks and shared expert, named before they are read. */
interface MoeSlots {
  readonly router: WeightSlot;
  readonly gate: WeightSlot;
  readonly up: WeightSlot;
  readonly down: WeightSlot;
  readonly selectionBias: WeightSlot | null;
  readonly shared: (DenseFfnSlots & { readonly gateInp: WeightSlot | null }) | null;
}

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
  const config = readModelConfig(gguf);
  // IQ1–IQ3 tensors decode through codebook grids kept out of the main download (quant/iq-grids.ts).
  if (gguf.tensors.some((t) => IQ_GRID_TYPES.has(t.type))) await loadIqGrids();
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
    outScales.push(loader.has(name) ? (await hostValues(loader, name, [1]))[0] : 1);
  }
  const perLayerSlots = nPL > 0 ? namePerLayerWeights(loader, names, c) : null;
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
    const dense = spec.moe ? null : denseFfnSlots(loader, names, c, il, ffnDim);
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
      postAttnNorm: c.postNorms ? loader.upload(n(names.postAttnNorm), [c.embeddingLength]) : null,
      ffnNorm: c.preNorms ? loader.upload(n(names.ffnNorm), [c.embeddingLength]) : null,
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
    };
  });
  await loader.loadAll();
  const perLayer = perLayerSlots && perLayerWeightsOf(perLayerSlots, await perLayerSlots.tables());
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
            wk: get(l.wk),
            wv: get(l.wv),
            bq: get(l.bq),
            bk: get(l.bk),
            bv: get(l.bv),
            qNorm: get(l.qNorm),
            kNorm: get(l.kNorm),
            wo: l.wo.get(),
            bo: get(l.bo),
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
  };
  return new TransformerModel(config, weights, ops, { contextLength, ubatchSize, nSlots, kvType: options.kvType });
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
  return hostValues(loader, name, [(c.globalRopeFreqs ? c.headDim : c.ropeDims) / 2]);
}

/** A small tensor's values on the host (f32, dequantized). */
async function hostValues(loader: WeightLoader, name: string, shape: readonly number[]): Promise<Float32Array> {
  const { info, bytes } = await loader.readHost(name, shape);
  const out = new Float32Array(info.nElements); // [nElements]
  if (info.type === GgmlType.F32) new Uint8Array(out.buffer).set(bytes.subarray(0, out.byteLength));
  else getQuantType(info.type).dequantizeRow(bytes, out, out.length);
  return out;
}

/**
 * The classifier of a rank-pooling model, dequantized on the host (`cls.output.weight` [n_embd, n_cls_out] and its
 * bias); null when the file has none. A dense `cls.weight` pre-head (BERT-style rerankers) is not supported.
 */
async function rankHeadOf(loader: WeightLoader, gguf: GgufFile, c: ModelConfig): Promise<RankHead | null> {
  if (loader.has('cls.weight'))
    throw new LlmError('unsupported-arch', `loading model: this ${c.arch} reranker's dense cls head is not supported`);
  if (!loader.has('cls.output.weight')) return null;
  const host = async (name: string, shape: readonly number[]): Promise<Float32Array> => {
    const { info, bytes } = await loader.readHost(name, shape);
    const rowLength = info.shape[0]!;
    const rows = info.nElements / rowLength;
    const rowBytes = info.byteLength / rows;
    const out = new Float32Array(info.nElements); // [rows, rowLength]
    for (let r = 0; r < rows; r++) {
      const src = bytes.subarray(r * rowBytes, (r + 1) * rowBytes);
      const dst = out.subarray(r * rowLength, (r + 1) * rowLength);
      if (info.type === GgmlType.F32) new Uint8Array(dst.buffer, dst.byteOffset, dst.byteLength).set(src);
      else getQuantType(info.type).dequantizeRow(src, dst, rowLength);
    }
    return out;
  };
  const nOut = gguf.tensors.find((t) => t.name === 'cls.output.weight')?.shape[1] ?? 1;
  const weight = await host('cls.output.weight', [c.embeddingLength, nOut]); // [nOut, nEmbd]
  const bias = loader.has('cls.output.bias') ? await host('cls.output.bias', [nOut]) : null;
  const qwen3 = c.arch === 'qwen3';
  return { weight, bias, nOut, lastToken: qwen3, softmax: qwen3 };
}

/** The dense gated FFN of layer `il` (phi3's fused gate|up split by rows). */
function denseFfnSlots(
  loader: WeightLoader,
  names: TensorNames,
  c: ModelConfig,
  il: number,
  ffnDim: number,
): DenseFfnSlots {
  const n = (pattern: string): string => layerTensorName(pattern, il);
  const [gate, up] = c.fusedGateUp
    ? loader.uploadSplit(n(names.ffnUp), c.embeddingLength, [
        [n(names.ffnGate), ffnDim],
        [n(names.ffnUp), ffnDim],
      ])
    : [
        loader.upload(n(names.ffnGate), [c.embeddingLength, ffnDim]),
        loader.upload(n(names.ffnUp), [c.embeddingLength, ffnDim]),
      ];
  return { gate: gate!, up: up!, down: loader.upload(n(names.ffnDown), [ffnDim, c.embeddingLength]) };
}

/** The router, the 3-D expert stacks (one weight each) and the shared expert of MoE layer `il`. */
function moeSlots(
  loader: WeightLoader,
  names: TensorNames,
  c: ModelConfig,
  il: number,
  m: MoeLayerSpec,
  sharedDim: number,
): MoeSlots {
  const n = (pattern: string): string => layerTensorName(pattern, il);
  const e = c.embeddingLength;
  return {
    router: loader.upload(n(names.ffnGateInp), [e, m.nExperts]),
    gate: loader.upload(n(names.ffnGateExps), [e, m.expertDim, m.nExperts]),
    up: loader.upload(n(names.ffnUpExps), [e, m.expertDim, m.nExperts]),
    down: loader.upload(n(names.ffnDownExps), [m.expertDim, e, m.nExperts]),
    selectionBias: loader.optional(n(names.ffnExpProbsB), [m.nExperts]),
    shared:
      m.shared === 'none'
        ? null
        : {
            gate: loader.upload(n(names.ffnGateShexp), [e, sharedDim]),
            up: loader.upload(n(names.ffnUpShexp), [e, sharedDim]),
            down: loader.upload(n(names.ffnDownShexp), [sharedDim, e]),
            gateInp: m.shared === 'gated' ? loader.upload(n(names.ffnGateInpShexp), [e]) : null,
          },
  };
}

/** The uploaded weights of a MoE layer's slots. */
function moeWeights(m: MoeSlots): MoeWeights {
  const s = m.shared;
  return {
    router: m.router.get(),
    gate: m.gate.get(),
    up: m.up.get(),
    down: m.down.get(),
    selectionBias: m.selectionBias?.get() ?? null,
    shared: s && { gate: s.gate.get(), up: s.up.get(), down: s.down.get(), gateInp: s.gateInp?.get() ?? null },
  };
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
