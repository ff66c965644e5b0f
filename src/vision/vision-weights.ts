/**
 * Loads the gemma3 vision encoder's weights from an mmproj file into f32 arrays (the plain-TS reference encoder's
 * form): every tensor looked up by its llama.cpp name (`tensor-names.ts`), its ggml shape checked against the
 * `VisionConfig` (`gguf-invalid` naming the tensor), any type webgguf dequantizes accepted.
 */

import { LlmError, throwIfAborted } from '../errors.js';
import type { GgufFile, GgufTensorInfo } from '../gguf/types.js';
import type { ByteSource } from '../io/byte-source.js';
import { dequantize } from '../quant/index.js';
import { PROJECTOR_TENSORS } from './projector-tensors.js';
import { layerTensorName, type VISION_LAYER_TENSORS, VISION_TENSORS } from './tensor-names.js';
import type { VisionConfig } from './vision-config.js';

/** One ViT block: weights in ggml order (row j of a matrix = output j), biases per output. */
interface VisionLayerWeights {
  /** [d] each */
  readonly ln1W: Float32Array;
  readonly ln1B: Float32Array;
  /** [d, d] (out, in) */
  readonly qW: Float32Array;
  readonly qB: Float32Array;
  readonly kW: Float32Array;
  readonly kB: Float32Array;
  readonly vW: Float32Array;
  readonly vB: Float32Array;
  readonly oW: Float32Array;
  readonly oB: Float32Array;
  readonly ln2W: Float32Array;
  readonly ln2B: Float32Array;
  /** [f, d] (out, in) */
  readonly upW: Float32Array;
  /** [f] */
  readonly upB: Float32Array;
  /** [d, f] (out, in) */
  readonly downW: Float32Array;
  readonly downB: Float32Array;
  /** [f, d] (out, in): the gate of a gated FFN (pixtral: SiLU(gate) × up), when the file has one */
  readonly gateW?: Float32Array;
  /** [f]: the gate's bias (Qwen2.5-VL), when the file has one */
  readonly gateB?: Float32Array;
}

/** The encoder and gemma3 projector. */
export interface VisionWeights {
  readonly config: VisionConfig;
  /** Width of the projected embeddings: the text model's n_embd. */
  readonly nEmbdText: number;
  /** [d, 3, patch, patch] (conv kernel: out channel, in channel, ky, kx) */
  readonly patchW: Float32Array;
  /** [d] */
  readonly patchB: Float32Array;
  /** [nPatches, d] */
  readonly posEmbd: Float32Array;
  readonly layers: readonly VisionLayerWeights[];
  /** [d] each; present in some conversions (llama.cpp applies it when present) */
  readonly preLn?: { readonly w: Float32Array; readonly b: Float32Array };
  /** [d] each; absent in some conversions (llava), then not applied */
  readonly postLn?: { readonly w: Float32Array; readonly b: Float32Array };
  /** [d]: CLIP's class token (llava), appended after the patches; the position table then has nPatches + 1 rows */
  readonly classEmbd?: Float32Array;
  /** gemma3 only: [d] */
  readonly softEmbNormW?: Float32Array;
  /** gemma3 only: [d, nEmbdText] (in, out): ggml's `mm.input_projection.weight` as stored, used transposed */
  readonly projW?: Float32Array;
  /** The other projectors' `mm.*` tensors by llama.cpp name (`projector-tensors.ts`), ggml order. */
  readonly mm: Readonly<Record<string, Float32Array>>;
}

/** Reads tensors of one file by name, checking shapes. */
class TensorReader {
  private readonly byName = new Map<string, GgufTensorInfo>();
  constructor(
    private readonly gguf: GgufFile,
    private readonly source: ByteSource,
    private readonly signal?: AbortSignal,
  ) {
    for (const t of gguf.tensors) this.byName.set(t.name, t);
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  info(name: string): GgufTensorInfo {
    const t = this.byName.get(name);
    if (t === undefined) {
      throw new LlmError('gguf-invalid', `mmproj tensor '${name}' is missing; the file cannot be run without it`, {
        details: { tensor: name },
      });
    }
    return t;
  }

  async read(name: string, shape: readonly number[]): Promise<Float32Array> {
    throwIfAborted(this.signal, 'loading the vision encoder');
    const t = this.info(name);
    const same = t.shape.length >= shape.length && t.shape.every((n, i) => n === (shape[i] ?? 1));
    if (!same) {
      throw new LlmError(
        'gguf-invalid',
        `mmproj tensor '${name}' has shape [${t.shape.join(', ')}]; the vision config needs [${shape.join(', ')}]`,
        { details: { tensor: name, shape: [...t.shape], expected: [...shape] } },
      );
    }
    const bytes = await this.source.read(this.gguf.tensorDataOffset + t.offset, t.byteLength, this.signal);
    return dequantize(t.type, bytes, t.nElements);
  }
}

/**
 * Loads the vision weights. `nEmbdText` is the text model's n_embd: a projection of another width is
 * `invalid-request` (the mmproj belongs to another model).
 */
export async function loadVisionWeights(
  gguf: GgufFile,
  source: ByteSource,
  config: VisionConfig,
  nEmbdText: number,
  signal?: AbortSignal,
): Promise<VisionWeights> {
  const r = new TensorReader(gguf, source, signal);
  const { nEmbd: d, nFf: f, patchSize: p } = config;
  const nPatches = (config.imageSize / p) ** 2;
  const proj = PROJECTOR_TENSORS[config.projector];
  const outWidth = r.info(proj.output.tensor).shape[proj.output.dim];
  if (outWidth !== nEmbdText) {
    throw new LlmError(
      'invalid-request',
      `the mmproj (projector '${config.projector}') projects images to ${outWidth} values per token but the text ` +
        `model's n_embd is ${nEmbdText}; use the mmproj file made for this model`,
      { details: { mmprojEmbd: outWidth ?? 0, modelEmbd: nEmbdText } },
    );
  }
  const mm: Record<string, Float32Array> = {};
  const shapeOf = (name: string) => (r.has(name) ? r.info(name).shape : undefined);
  for (const [name, shape] of Object.entries(proj.tensors(config, nEmbdText, shapeOf)))
    mm[name] = await r.read(name, shape);
  const T = VISION_TENSORS;
  const layers: VisionLayerWeights[] = [];
  for (let il = 0; il < config.nLayers; il++) {
    // Early gemma3 conversions stored up under ffn_down and down under ffn_up; llama.cpp swaps them back when
    // ffn_down's rows are n_embd long (clip.cpp `is_ffn_swapped`).
    const swapped = d !== f && r.info(layerTensorName('ffnDown', il, 'weight')).shape[0] === d;
    const real = (k: keyof typeof VISION_LAYER_TENSORS) =>
      swapped && k === 'ffnUp' ? 'ffnDown' : swapped && k === 'ffnDown' ? 'ffnUp' : k;
    const w = (k: keyof typeof VISION_LAYER_TENSORS, shape: number[]) =>
      r.read(layerTensorName(real(k), il, 'weight'), shape);
    // Biases are optional (pixtral has none), as llama.cpp's `if (layer.q_b)`; absent ones read as zeros.
    const b = (k: keyof typeof VISION_LAYER_TENSORS, n: number) =>
      !r.has(layerTensorName(real(k), il, 'bias'))
        ? Promise.resolve(new Float32Array(n))
        : r.read(layerTensorName(real(k), il, 'bias'), [n]);
    const gate = layerTensorName('ffnGate', il, 'weight');
    const qkv = await fusedQkv(r, il, d); // qwen3vl: Q|K|V in one matrix, split here
    const gateBias = (i: number) => layerTensorName('ffnGate', i, 'bias');
    layers.push({
      ln1W: await w('ln1', [d]),
      ln1B: await b('ln1', d),
      qW: qkv?.[0] ?? (await w('attnQ', [d, d])),
      qB: qkv?.[1] ?? (await b('attnQ', d)),
      kW: qkv?.[2] ?? (await w('attnK', [d, d])),
      kB: qkv?.[3] ?? (await b('attnK', d)),
      vW: qkv?.[4] ?? (await w('attnV', [d, d])),
      vB: qkv?.[5] ?? (await b('attnV', d)),
      oW: await w('attnOut', [d, d]),
      oB: await b('attnOut', d),
      ln2W: await w('ln2', [d]),
      ln2B: await b('ln2', d),
      upW: await w('ffnUp', [d, f]),
      upB: await b('ffnUp', f),
      downW: await w('ffnDown', [f, d]),
      downB: await b('ffnDown', d),
      ...(r.has(gate) ? { gateW: await r.read(gate, [d, f]) } : {}),
      ...(r.has(gateBias(il)) ? { gateB: await r.read(gateBias(il), [f]) } : {}),
    });
  }
  return {
    config,
    nEmbdText,
    patchW: await r.read(T.patchEmbd, [p, p, 3, d]),
    patchB: r.has(T.patchBias) ? await r.read(T.patchBias, [d]) : new Float32Array(d), // CLIP has none
    posEmbd:
      config.rope2dTheta > 0 // 2-D RoPE, no learned table
        ? new Float32Array(0)
        : await r.read(T.positionEmbd, [d, nPatches + (r.has(T.classEmbd) ? 1 : 0)]),
    ...(r.has(T.classEmbd) ? { classEmbd: await r.read(T.classEmbd, [d]) } : {}),
    layers,
    ...(r.has(T.preLnWeight)
      ? {
          preLn: {
            w: await r.read(T.preLnWeight, [d]),
            // pixtral's RMS pre-norm has no bias; a missing bias is none (clip.cpp's build_norm)
            b: r.has(T.preLnBias) ? await r.read(T.preLnBias, [d]) : new Float32Array(d),
          },
        }
      : {}),
    ...(r.has(T.postLnWeight) // optional in every projector, as clip.cpp
      ? {
          postLn: {
            w: await r.read(T.postLnWeight, [d]),
            // an RMS post-norm (Qwen2.5-VL's merger ln_q) has no bias
            b: r.has(T.postLnBias) ? await r.read(T.postLnBias, [d]) : new Float32Array(d),
          },
        }
      : {}),
    ...(config.projector === 'gemma3'
      ? { softEmbNormW: await r.read(T.softEmbNorm, [d]), projW: await r.read(T.inputProjection, [nEmbdText, d]) }
      : {}),
    mm,
  };
}

/** A fused `attn_qkv` of layer il split into [qW, qB, kW, kB, vW, vB] (rows q, then k, then v), or null without one. */
async function fusedQkv(r: TensorReader, il: number, d: number): Promise<Float32Array[] | null> {
  const name = layerTensorName('attnQkv', il, 'weight');
  if (!r.has(name)) return null;
  const w = await r.read(name, [d, 3 * d]); // [3d, d] (out, in)
  const bias = layerTensorName('attnQkv', il, 'bias');
  const b = r.has(bias) ? await r.read(bias, [3 * d]) : new Float32Array(3 * d);
  return [0, 1, 2].flatMap((j) => [w.slice(j * d * d, (j + 1) * d * d), b.slice(j * d, (j + 1) * d)]);
}
