/**
 * A LayerNorm ViT's (SigLIP, CLIP) and its projector's weights uploaded to a backend (`Ops`), for `vit-ops.ts`: named and
 * shape-checked by the model's `WeightLoader` (a missing or misshapen tensor is `gguf-invalid` naming it), then read
 * in file order straight onto the backend, matrices in their published type (F32, F16, Q8_0 …). Two tensors are
 * re-laid out on the host:
 * - the patch conv kernel [d, 3, p, p] becomes an F16 matrix [d rows, 3·p·p]: llama.cpp's `ggml_conv_2d` multiplies
 *   an F16 im2col, so kernel and pixels are rounded to f16 whatever the file stores;
 * - the projection `mm.input_projection` (ggml [nEmbdText, d], used transposed) is stored transposed, [nEmbdText rows,
 *   d], as F16 when the file's is F16 (the values are exact) and F32 otherwise.
 */

import type { Ops, Weight } from '../backend/ops.js';
import { LlmError } from '../errors.js';
import { GgmlType, type GgufFile } from '../gguf/types.js';
import type { ByteSource } from '../io/byte-source.js';
import { WeightLoader, type WeightSlot } from '../model/weight-loader.js';
import { roundToF16, writeF16 } from '../quant/half.js';
import { GEMMA4V_TENSORS } from './projector-gemma4v.js';
import { isLdpMatrix } from './projector-ldp.js';
import { LFM2_TENSORS } from './projector-lfm2.js';
import { PIXTRAL_TENSORS } from './projector-pixtral.js';
import { PROJECTOR_TENSORS } from './projector-tensors.js';
import { QWEN25VL_TENSORS } from './projector-qwen25vl.js';
import { layerTensorName, type VISION_LAYER_TENSORS, VISION_TENSORS } from './tensor-names.js';
import type { VisionConfig } from './vision-config.js';

/** A LayerNorm's weight and bias, [d] each (the bias optional beyond gemma3). */
export interface VitNorm {
  readonly w: Weight;
  readonly b: Weight | null;
}

/** One ViT block on the backend: matrices [out rows, in] as ggml stores them, biases [out]. */
interface VitLayer {
  readonly ln1: VitNorm;
  readonly q: Weight; // [d rows, d]
  readonly qB: Weight | null;
  readonly k: Weight; // [d rows, d]
  readonly kB: Weight | null;
  readonly v: Weight; // [d rows, d]
  readonly vB: Weight | null;
  readonly o: Weight; // [d rows, d]
  readonly oB: Weight | null;
  readonly ln2: VitNorm;
  readonly up: Weight; // [f rows, d]
  readonly upB: Weight | null; // [f]
  readonly down: Weight; // [d rows, f]
  /** [f rows, d]: the gate of a gated FFN (pixtral: act(gate) × up), null for the sequential FFN */
  readonly gate: Weight | null;
  /** [f]: the gate's bias (Qwen2.5-VL), null without one */
  readonly gateB: Weight | null;
  readonly downB: Weight | null; // [d]
}

/** The encoder and its projector on the backend. */
export interface VitWeights {
  /** [d rows, 3·p·p] F16: row e = output channel e's kernel in (channel, ky, kx) order, as the im2col rows */
  readonly patch: Weight;
  readonly patchB: Weight | null; // [d]; CLIP has none
  /** [nPatches (+ 1) rows, d], looked up by patch index (the class token's row last); null with 2-D RoPE (pixtral) */
  readonly pos: Weight | null;
  /** The position table on the host, [nPatches, d] (lfm2 resizes it to each picture's grid); null for the others. */
  readonly posHost: Float32Array | null;
  /** [1, d] host copy of CLIP's class token (llava), appended after the patches; null without one. */
  readonly classEmbd: Float32Array | null;
  readonly preLn: VitNorm | null;
  readonly layers: readonly VitLayer[];
  readonly postLn: VitNorm | null; // absent in CLIP conversions
  /** gemma3: [d] */
  readonly softEmbNorm: Weight | null;
  /** gemma3: [nEmbdText rows, d], the projection transposed */
  readonly proj: Weight | null;
  /** The other projectors' `mm.*` tensors as the file stores them (matrices [out rows, in]), by llama.cpp name. */
  readonly mm: Readonly<Record<string, Weight>>;
  /** Host copies of the projector's vectors applied on the host (lfm2's input LayerNorm), by llama.cpp name. */
  readonly mmHost: Readonly<Record<string, Float32Array>>;
}

/** `invalid-request` when the projection's output is not the text model's width (the mmproj of another model). */
function checkProjectionWidth(gguf: GgufFile, config: VisionConfig, nEmbdText: number): void {
  const out = PROJECTOR_TENSORS[config.projector]!.output;
  const t = gguf.tensors.find((x) => x.name === out.tensor);
  const width = t?.shape[out.dim];
  if (width !== undefined && width !== nEmbdText) {
    throw new LlmError(
      'invalid-request',
      `the mmproj (projector '${config.projector}') projects images to ${width} values per token but the text ` +
        `model's n_embd is ${nEmbdText}; use the mmproj file made for this model`,
      { details: { mmprojEmbd: width, modelEmbd: nEmbdText } },
    );
  }
}

/**
 * Projector tensors the backend encoder applies on the host: ldp's but its matrices, lfm2's input LayerNorm, pixtral's
 * input RMSNorm and break row, gemma4v's position tables, standardisation, output scales and clamp scalars.
 */
const onHost = (name: string): boolean =>
  (name.startsWith('mm.model.mb_block.') && !isLdpMatrix(name)) ||
  (
    [
      LFM2_TENSORS.normW,
      LFM2_TENSORS.normB,
      PIXTRAL_TENSORS.imgBreak,
      PIXTRAL_TENSORS.inputNorm,
      GEMMA4V_TENSORS.positions,
      GEMMA4V_TENSORS.stdBias,
      GEMMA4V_TENSORS.stdScale,
      QWEN25VL_TENSORS.patch1,
    ] as string[]
  ).includes(name) ||
  /\.(out_scale\.weight|input_min|input_max|output_min|output_max)$/.test(name);

/**
 * The patch kernel as an F16 matrix [d rows, 3·p·p] (values rounded to f16, as ggml's F16 im2col product). With a
 * second kernel (Qwen-VL's second temporal frame, [d, 3, p, p]; a still image feeds both): the sum of the two
 * f16-rounded kernels as an F32 matrix, one product for mtmd's two convolutions summed.
 */
async function patchKernel(loader: WeightLoader, config: VisionConfig, second?: Float32Array): Promise<Weight> {
  const { nEmbd: d, patchSize: p } = config;
  const k = await loader.readHostF32(VISION_TENSORS.patchEmbd, [p, p, 3, d]); // [d, 3, p, p]
  const info = { name: VISION_TENSORS.patchEmbd, shape: [3 * p * p, d] };
  if (second) {
    const sum = k.map((v, i) => Math.fround(roundToF16(v) + roundToF16(second[i]!)));
    return loader.uploadBuilt({ ...info, type: GgmlType.F32 }, new Uint8Array(sum.buffer));
  }
  const bytes = new Uint8Array(k.length * 2);
  for (let i = 0; i < k.length; i++) writeF16(bytes, i * 2, k[i]!);
  return loader.uploadBuilt({ ...info, type: GgmlType.F16 }, bytes);
}

/** Qwen3-VL's fused `attn_qkv` of layer il ([3d rows, d], bias [3d]) as q, k, v slots of d rows each; null without one. */
function splitQkv(loader: WeightLoader, il: number, d: number): Record<string, WeightSlot | null> | null {
  const name = layerTensorName('attnQkv', il, 'weight');
  if (!loader.has(name)) return null;
  const [q, k, v] = loader.uploadSplit(
    name,
    d,
    ['q', 'k', 'v'].map((p) => [`${name}.${p}`, d] as const),
  );
  const bias = layerTensorName('attnQkv', il, 'bias');
  const parts = ['q', 'k', 'v'].map((p) => [`${bias}.${p}`, 1] as const);
  const [qB, kB, vB] = loader.has(bias) ? loader.uploadSplit(bias, d, parts, [3 * d]) : [null, null, null];
  return { q: q!, k: k!, v: v!, qB: qB ?? null, kB: kB ?? null, vB: vB ?? null };
}

/** The projection transposed: [nEmbdText rows, d], F16 when the file's is F16, else F32. */
async function projection(loader: WeightLoader, d: number, nEmbdText: number): Promise<Weight> {
  const name = VISION_TENSORS.inputProjection;
  const src = await loader.readHostF32(name, [nEmbdText, d]); // [d rows (inputs), nEmbdText]
  const f16 = loader.info(name).type === GgmlType.F16;
  const t = new Float32Array(d * nEmbdText); // [nEmbdText, d]
  for (let e = 0; e < d; e++) for (let j = 0; j < nEmbdText; j++) t[j * d + e] = src[e * nEmbdText + j]!;
  let bytes = new Uint8Array(t.buffer);
  if (f16) {
    bytes = new Uint8Array(t.length * 2);
    for (let i = 0; i < t.length; i++) writeF16(bytes, i * 2, t[i]!);
  }
  return loader.uploadBuilt({ name, type: f16 ? GgmlType.F16 : GgmlType.F32, shape: [d, nEmbdText] }, bytes);
}

/** Names, reads and uploads the encoder's weights onto `ops`. */
export async function loadVitWeights(
  gguf: GgufFile,
  source: ByteSource,
  ops: Ops,
  config: VisionConfig,
  nEmbdText: number,
  signal?: AbortSignal,
): Promise<VitWeights> {
  checkProjectionWidth(gguf, config, nEmbdText);
  const loader = new WeightLoader(gguf, source, ops, signal ? { signal } : {});
  const { nEmbd: d, nFf: f, patchSize: p } = config;
  const T = VISION_TENSORS;
  const hasClass = loader.has(T.classEmbd);
  const nPatches = (config.imageSize / p) ** 2;
  const gemma3 = config.projector === 'gemma3';
  const norm = (w: string, b: string) => ({
    w: loader.upload(w, [d]),
    b: loader.has(b) ? loader.upload(b, [d]) : null, // pixtral's RMS norms have none
  });
  const layerSlots = Array.from({ length: config.nLayers }, (_, il) => {
    // Early gemma3 conversions stored up under ffn_down and down under ffn_up (clip.cpp `is_ffn_swapped`).
    const swapped = d !== f && loader.info(layerTensorName('ffnDown', il, 'weight')).shape[0] === d;
    const real = (k: keyof typeof VISION_LAYER_TENSORS) =>
      swapped && k === 'ffnUp' ? 'ffnDown' : swapped && k === 'ffnDown' ? 'ffnUp' : k;
    const w = (k: keyof typeof VISION_LAYER_TENSORS, shape: number[]) =>
      loader.upload(layerTensorName(real(k), il, 'weight'), shape);
    // Biases are optional (llama.cpp's `if (layer.q_b)`): absent ones are null.
    const b = (k: keyof typeof VISION_LAYER_TENSORS, n: number) => {
      const name = layerTensorName(real(k), il, 'bias');
      return loader.has(name) ? loader.upload(name, [n]) : null;
    };
    const qkv = splitQkv(loader, il, d);
    return {
      ln1: { w: w('ln1', [d]), b: b('ln1', d) },
      q: qkv ? qkv.q! : w('attnQ', [d, d]),
      qB: qkv ? (qkv.qB ?? null) : b('attnQ', d),
      k: qkv ? qkv.k! : w('attnK', [d, d]),
      kB: qkv ? (qkv.kB ?? null) : b('attnK', d),
      v: qkv ? qkv.v! : w('attnV', [d, d]),
      vB: qkv ? (qkv.vB ?? null) : b('attnV', d),
      o: w('attnOut', [d, d]),
      oB: b('attnOut', d),
      ln2: { w: w('ln2', [d]), b: b('ln2', d) },
      up: w('ffnUp', [d, f]),
      upB: b('ffnUp', f),
      down: w('ffnDown', [f, d]),
      downB: b('ffnDown', d),
      gate: loader.has(layerTensorName('ffnGate', il, 'weight')) ? w('ffnGate', [d, f]) : null,
      gateB: loader.has(layerTensorName('ffnGate', il, 'bias')) ? b('ffnGate', f) : null,
    };
  });
  const patchB = loader.has(T.patchBias) ? loader.upload(T.patchBias, [d]) : null;
  const pos = config.rope2dTheta > 0 ? null : loader.upload(T.positionEmbd, [d, nPatches + (hasClass ? 1 : 0)]);
  const preLn = loader.has(T.preLnWeight) ? norm(T.preLnWeight, T.preLnBias) : null;
  const postLn = loader.has(T.postLnWeight) ? norm(T.postLnWeight, T.postLnBias) : null; // optional, as clip.cpp
  const softEmbNorm = gemma3 ? loader.upload(T.softEmbNorm, [d]) : null;
  const shapeOf = (name: string) => (loader.has(name) ? loader.info(name).shape : undefined);
  const mmShapes = Object.entries(PROJECTOR_TENSORS[config.projector]!.tensors(config, nEmbdText, shapeOf));
  const mmSlots = mmShapes
    .filter(([name]) => !onHost(name))
    .map(([name, shape]) => [name, loader.upload(name, shape)] as const);
  // The host re-layouts and copies first: a backend streaming weights places memory between reads.
  const mmHost: Record<string, Float32Array> = {};
  for (const [name, shape] of mmShapes) if (onHost(name)) mmHost[name] = await loader.readHostF32(name, shape);
  const resized = config.preprocessor === 'lfm2' || config.projector === 'qwen3vl_merger'; // each picture's grid
  const posHost = resized ? await loader.readHostF32(T.positionEmbd, [d, nPatches]) : null;
  const classEmbd = hasClass ? await loader.readHostF32(T.classEmbd, [d]) : null;
  const patch = await patchKernel(loader, config, mmHost[QWEN25VL_TENSORS.patch1]);
  const proj = gemma3 ? await projection(loader, d, nEmbdText) : null;
  await loader.loadAll();
  const opt = (s: WeightSlot | null) => (s === null ? null : s.get());
  const got = (n: { w: WeightSlot; b: WeightSlot | null }): VitNorm => ({ w: n.w.get(), b: opt(n.b) });
  return {
    patch,
    patchB: opt(patchB),
    pos: opt(pos),
    posHost,
    classEmbd,
    preLn: preLn ? got(preLn) : null,
    layers: layerSlots.map((l) => ({
      ln1: { w: l.ln1.w.get(), b: opt(l.ln1.b) },
      q: l.q.get(),
      qB: opt(l.qB),
      k: l.k.get(),
      kB: opt(l.kB),
      v: l.v.get(),
      vB: opt(l.vB),
      o: l.o.get(),
      oB: opt(l.oB),
      ln2: { w: l.ln2.w.get(), b: opt(l.ln2.b) },
      up: l.up.get(),
      upB: opt(l.upB),
      down: l.down.get(),
      downB: opt(l.downB),
      gate: opt(l.gate),
      gateB: opt(l.gateB),
    })),
    postLn: postLn ? got(postLn) : null,
    softEmbNorm: opt(softEmbNorm),
    proj,
    mm: Object.fromEntries(mmSlots.map(([name, slot]) => [name, slot.get()])),
    mmHost,
  };
}
