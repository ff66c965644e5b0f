/**
 * `loadTransformer`: turns a parsed GGUF file into a `Transformer` on one backend. Looks the architecture up in the
 * registry, reads its config, then streams tensors one at a time from the `ByteSource` into `ops.uploadWeight`
 * (the file is never held whole in memory), splitting phi3's fused QKV and gate|up matrices by rows on the way.
 */

import type { KvType } from '../backend/kv-type.js';
import type { Ops, Weight } from '../backend/ops.js';
import { LlmError, isLlmError, throwIfAborted } from '../errors.js';
import { GgmlType, type GgufFile, type GgufTensorInfo } from '../gguf/types.js';
import type { ByteSource } from '../io/byte-source.js';
import { getQuantType } from '../quant/index.js';
import { getArchitecture, layerTensorName, type TensorNames } from './arch/index.js';
import { checkConfigAgainstTensors } from './check-config.js';
import { type ModelConfig, modelMetadata } from './config.js';
import { describeLayers, type MoeLayerSpec } from './layer-spec.js';
import { DEFAULT_UBATCH_SIZE, defaultContextLength } from './run-shape.js';
import { firstNonFinite } from './non-finite-scan.js';
import {
  type DenseFfnWeights,
  type LayerWeights,
  type ModelWeights,
  type MoeWeights,
  type ShortConvLayerWeights,
  TransformerModel,
} from './transformer.js';

/** Progress of weight upload. */
interface LoadProgress {
  readonly loadedBytes: number;
  readonly totalBytes: number;
  /** The tensor just uploaded. */
  readonly tensor: string;
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

  const tokenEmbd = await loader.upload(names.tokenEmbd, [c.embeddingLength, c.vocabSize]);
  const outputNorm = await loader.upload(names.outputNorm, [c.embeddingLength]);
  const output =
    !c.alwaysTied && loader.has(names.output)
      ? await loader.upload(names.output, [c.embeddingLength, c.vocabSize])
      : tokenEmbd;
  const outputBias = await loader.optional(names.outputBias, [c.vocabSize]);
  const ropeFreqFactors = await loader.ropeFactors(names, c, contextLength);

  const layers: (LayerWeights | ShortConvLayerWeights)[] = [];
  for (const [il, spec] of describeLayers(c).entries()) {
    const n = (pattern: string): string => layerTensorName(pattern, il);
    if (spec.kind === 'shortconv') {
      const E = c.embeddingLength;
      layers.push({
        kind: 'shortconv',
        attnNorm: await loader.upload(n(names.attnNorm), [E]),
        inProj: await loader.upload(n(names.shortConvInProj), [E, 3 * E]),
        conv: await loader.upload(n(names.shortConv), [spec.convWidth, E]),
        outProj: await loader.upload(n(names.shortConvOutProj), [E, E]),
        ffnNorm: await loader.upload(n(names.ffnNorm), [E]),
        gate: await loader.upload(n(names.ffnGate), [E, spec.ffnDim]),
        up: await loader.upload(n(names.ffnUp), [E, spec.ffnDim]),
        down: await loader.upload(n(names.ffnDown), [spec.ffnDim, E]),
        postFfnNorm: null,
      });
      continue;
    }
    const qRows = spec.nHeads * spec.headDim; // per-layer geometry
    const kvRows = spec.nKvHeads * spec.headDim;
    const ffnDim = spec.ffnDim;
    const [wq, wk, wv] = c.fusedQkv
      ? await loader.uploadSplit(n(names.attnQkv), c.embeddingLength, [
          [n(names.attnQ), qRows],
          [n(names.attnK), kvRows],
          [n(names.attnV), kvRows],
        ])
      : [
          await loader.upload(n(names.attnQ), [c.embeddingLength, qRows]),
          await loader.upload(n(names.attnK), [c.embeddingLength, kvRows]),
          await loader.upload(n(names.attnV), [c.embeddingLength, kvRows]),
        ];
    const dense = spec.moe ? null : await loadDenseFfn(loader, names, c, il, ffnDim);
    layers.push({
      attnNorm: c.preNorms ? await loader.upload(n(names.attnNorm), [c.embeddingLength]) : null,
      wq,
      wk,
      wv,
      bq: await loader.optional(n(names.attnQBias), [qRows]),
      bk: await loader.optional(n(names.attnKBias), [kvRows]),
      bv: await loader.optional(n(names.attnVBias), [kvRows]),
      qNorm: c.qkNorm ? await loader.upload(n(names.attnQNorm), [allHeads ? qRows : spec.headDim]) : null,
      kNorm: c.qkNorm ? await loader.upload(n(names.attnKNorm), [allHeads ? kvRows : spec.headDim]) : null,
      wo: await loader.upload(n(names.attnOut), [qRows, c.embeddingLength]),
      bo: c.attnOutBias ? await loader.optional(n(names.attnOutBias), [c.embeddingLength]) : null,
      postAttnNorm: c.postNorms ? await loader.upload(n(names.postAttnNorm), [c.embeddingLength]) : null,
      ffnNorm: c.preNorms ? await loader.upload(n(names.ffnNorm), [c.embeddingLength]) : null,
      gate: dense?.gate ?? null,
      up: dense?.up ?? null,
      down: dense?.down ?? null,
      moe: spec.moe ? await loadMoe(loader, names, c, il, spec.moe, ffnDim) : null,
      postFfnNorm: c.postNorms ? await loader.upload(n(names.postFfnNorm), [c.embeddingLength]) : null,
    });
  }
  const weights: ModelWeights = { tokenEmbd, outputNorm, output, outputBias, ropeFreqFactors, layers };
  return new TransformerModel(config, weights, ops, { contextLength, ubatchSize, nSlots, kvType: options.kvType });
}

/** The dense gated FFN of layer `il` (phi3's fused gate|up split by rows). */
async function loadDenseFfn(
  loader: WeightLoader,
  names: TensorNames,
  c: ModelConfig,
  il: number,
  ffnDim: number,
): Promise<DenseFfnWeights> {
  const n = (pattern: string): string => layerTensorName(pattern, il);
  const [gate, up] = c.fusedGateUp
    ? await loader.uploadSplit(n(names.ffnUp), c.embeddingLength, [
        [n(names.ffnGate), ffnDim],
        [n(names.ffnUp), ffnDim],
      ])
    : [
        await loader.upload(n(names.ffnGate), [c.embeddingLength, ffnDim]),
        await loader.upload(n(names.ffnUp), [c.embeddingLength, ffnDim]),
      ];
  return { gate, up, down: await loader.upload(n(names.ffnDown), [ffnDim, c.embeddingLength]) };
}

/** The router, the 3-D expert stacks (one weight each) and the shared expert of MoE layer `il`. */
async function loadMoe(
  loader: WeightLoader,
  names: TensorNames,
  c: ModelConfig,
  il: number,
  m: MoeLayerSpec,
  sharedDim: number,
): Promise<MoeWeights> {
  const n = (pattern: string): string => layerTensorName(pattern, il);
  const e = c.embeddingLength;
  return {
    router: await loader.upload(n(names.ffnGateInp), [e, m.nExperts]),
    gate: await loader.upload(n(names.ffnGateExps), [e, m.expertDim, m.nExperts]),
    up: await loader.upload(n(names.ffnUpExps), [e, m.expertDim, m.nExperts]),
    down: await loader.upload(n(names.ffnDownExps), [m.expertDim, e, m.nExperts]),
    selectionBias: await loader.optional(n(names.ffnExpProbsB), [m.nExperts]),
    shared:
      m.shared === 'none'
        ? null
        : {
            gate: await loader.upload(n(names.ffnGateShexp), [e, sharedDim]),
            up: await loader.upload(n(names.ffnUpShexp), [e, sharedDim]),
            down: await loader.upload(n(names.ffnDownShexp), [sharedDim, e]),
            gateInp: m.shared === 'gated' ? await loader.upload(n(names.ffnGateInpShexp), [e]) : null,
          },
  };
}

/** Reads tensors by name and uploads them, checking shapes and reporting progress. */
class WeightLoader {
  private readonly byName: Map<string, GgufTensorInfo>;
  private readonly totalBytes: number;
  private loadedBytes = 0;

  constructor(
    private readonly gguf: GgufFile,
    private readonly source: ByteSource,
    private readonly ops: Ops,
    private readonly options: LoadTransformerOptions,
  ) {
    this.byName = new Map(gguf.tensors.map((t) => [t.name, t]));
    this.totalBytes = gguf.tensors.reduce((s, t) => s + t.byteLength, 0);
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** Uploads a required tensor whose ggml shape must equal `shape`. */
  async upload(name: string, shape: readonly number[]): Promise<Weight> {
    const info = this.require(name, shape);
    const bytes = await this.read(info);
    try {
      return await this.ops.uploadWeight({ name, type: info.type, shape: info.shape }, bytes, this.options.signal);
    } catch (e) {
      // Name the tensor: the backend's message only knows the type.
      if (isLlmError(e, 'unsupported-type'))
        throw new LlmError('unsupported-type', `loading model: tensor '${name}': ${e.message}`, {
          cause: e,
          details: { tensor: name },
        });
      throw e;
    }
  }

  /** Uploads a tensor when present; null otherwise. */
  async optional(name: string, shape: readonly number[]): Promise<Weight | null> {
    return this.has(name) ? this.upload(name, shape) : null;
  }

  /** Uploads a fused matrix as consecutive row ranges, each as its own weight (rows are contiguous in GGUF). */
  async uploadSplit(name: string, rowLength: number, parts: readonly (readonly [string, number])[]): Promise<Weight[]> {
    const totalRows = parts.reduce((s, [, rows]) => s + rows, 0);
    const info = this.require(name, [rowLength, totalRows]);
    const bytes = await this.read(info);
    const rowBytes = info.byteLength / totalRows;
    const out: Weight[] = [];
    let row = 0;
    for (const [partName, rows] of parts) {
      const slice = bytes.subarray(row * rowBytes, (row + rows) * rowBytes);
      out.push(
        await this.ops.uploadWeight(
          { name: partName, type: info.type, shape: [rowLength, rows] },
          slice,
          this.options.signal,
        ),
      );
      row += rows;
    }
    return out;
  }

  /**
   * Rope frequency divisors: `rope_freqs.weight` (llama3), or LongRoPE's short/long factors chosen as llama.cpp does
   * (long when the context exceeds the original training context). Kept on the host: rope params carry them.
   */
  async ropeFactors(names: TensorNames, c: ModelConfig, contextLength: number): Promise<Float32Array | null> {
    let name: string | null = null;
    if (this.has(names.ropeFreqs)) name = names.ropeFreqs;
    else if (this.has(names.ropeFactorsShort) || this.has(names.ropeFactorsLong)) {
      const r = modelMetadata(this.gguf.metadata, c.arch);
      const orig = r.count(r.archKey('rope.scaling.original_context_length'), c.trainContextLength);
      name = contextLength > orig && this.has(names.ropeFactorsLong) ? names.ropeFactorsLong : names.ropeFactorsShort;
    }
    if (name === null) return null;
    const info = this.require(name, [c.ropeDims / 2]);
    const bytes = await this.read(info);
    const out = new Float32Array(info.nElements); // [ropeDims / 2]
    if (info.type === GgmlType.F32) new Uint8Array(out.buffer).set(bytes.subarray(0, out.byteLength));
    else getQuantType(info.type).dequantizeRow(bytes, out, out.length);
    return out;
  }

  private require(name: string, shape: readonly number[]): GgufTensorInfo {
    const info = this.byName.get(name);
    if (!info) {
      throw new LlmError('gguf-invalid', `loading model: tensor '${name}' is missing from ${this.source.name}`, {
        details: { tensor: name },
      });
    }
    const same = info.shape.length === shape.length && info.shape.every((d, i) => d === shape[i]);
    if (!same) {
      throw new LlmError(
        'gguf-invalid',
        `loading model: tensor '${name}' has shape [${info.shape.join(', ')}], the config implies [${shape.join(', ')}]`,
        { details: { tensor: name, shape: info.shape.join(','), expected: shape.join(',') } },
      );
    }
    return info;
  }

  private async read(info: GgufTensorInfo): Promise<Uint8Array> {
    throwIfAborted(this.options.signal, 'loading model weights');
    const bytes = await this.source.read(
      this.gguf.tensorDataOffset + info.offset,
      info.byteLength,
      this.options.signal,
    );
    const bad = firstNonFinite(info.type, bytes);
    if (bad >= 0) {
      throw new LlmError(
        'gguf-invalid',
        `loading model: tensor '${info.name}' holds a non-finite value (NaN or Inf) at element ${bad}; the model would produce non-finite output — ` +
          'the file is broken, re-convert or re-download it',
        { details: { tensor: info.name, element: bad } },
      );
    }
    this.loadedBytes += info.byteLength;
    this.options.onProgress?.({ loadedBytes: this.loadedBytes, totalBytes: this.totalBytes, tensor: info.name });
    return bytes;
  }
}
