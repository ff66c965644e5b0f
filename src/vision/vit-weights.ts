/**
 * The SigLIP ViT's and the gemma3 projector's weights uploaded to a backend (`Ops`), for `vit-ops.ts`: named and
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
import { writeF16 } from '../quant/half.js';
import { layerTensorName, type VISION_LAYER_TENSORS, VISION_TENSORS } from './tensor-names.js';
import type { VisionConfig } from './vision-config.js';

/** A LayerNorm's weight and bias, [d] each. */
export interface VitNorm {
  readonly w: Weight;
  readonly b: Weight;
}

/** One ViT block on the backend: matrices [out rows, in] as ggml stores them, biases [out]. */
interface VitLayer {
  readonly ln1: VitNorm;
  readonly q: Weight; // [d rows, d]
  readonly qB: Weight;
  readonly k: Weight; // [d rows, d]
  readonly kB: Weight;
  readonly v: Weight; // [d rows, d]
  readonly vB: Weight;
  readonly o: Weight; // [d rows, d]
  readonly oB: Weight;
  readonly ln2: VitNorm;
  readonly up: Weight; // [f rows, d]
  readonly upB: Weight; // [f]
  readonly down: Weight; // [d rows, f]
  readonly downB: Weight; // [d]
}

/** The encoder and gemma3 projector on the backend. */
export interface VitWeights {
  /** [d rows, 3·p·p] F16: row e = output channel e's kernel in (channel, ky, kx) order, as the im2col rows */
  readonly patch: Weight;
  readonly patchB: Weight; // [d]
  /** [nPatches rows, d], looked up by patch index */
  readonly pos: Weight;
  readonly preLn: VitNorm | null;
  readonly layers: readonly VitLayer[];
  readonly postLn: VitNorm;
  readonly softEmbNorm: Weight; // [d]
  /** [nEmbdText rows, d]: the projection transposed */
  readonly proj: Weight;
}

/** `invalid-request` when the projection's output is not the text model's width (the mmproj of another model). */
function checkProjectionWidth(gguf: GgufFile, nEmbdText: number): void {
  const t = gguf.tensors.find((x) => x.name === VISION_TENSORS.inputProjection);
  const width = t?.shape[0];
  if (width !== undefined && width !== nEmbdText) {
    throw new LlmError(
      'invalid-request',
      `the mmproj projects images to ${width} values per token but the text model's n_embd is ${nEmbdText}; ` +
        'use the mmproj file made for this model',
      { details: { mmprojEmbd: width, modelEmbd: nEmbdText } },
    );
  }
}

/** The patch kernel as an F16 matrix [d rows, 3·p·p] (values rounded to f16, as ggml's F16 im2col product). */
async function patchKernel(loader: WeightLoader, config: VisionConfig): Promise<Weight> {
  const { nEmbd: d, patchSize: p } = config;
  const k = await loader.readHostF32(VISION_TENSORS.patchEmbd, [p, p, 3, d]); // [d, 3, p, p]
  const bytes = new Uint8Array(k.length * 2);
  for (let i = 0; i < k.length; i++) writeF16(bytes, i * 2, k[i]!);
  return loader.uploadBuilt({ name: VISION_TENSORS.patchEmbd, type: GgmlType.F16, shape: [3 * p * p, d] }, bytes);
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
  checkProjectionWidth(gguf, nEmbdText);
  const loader = new WeightLoader(gguf, source, ops, signal ? { signal } : {});
  const { nEmbd: d, nFf: f, patchSize: p } = config;
  const nPatches = (config.imageSize / p) ** 2;
  const T = VISION_TENSORS;
  const norm = (w: string, b: string) => ({ w: loader.upload(w, [d]), b: loader.upload(b, [d]) });
  const layerSlots = Array.from({ length: config.nLayers }, (_, il) => {
    // Early gemma3 conversions stored up under ffn_down and down under ffn_up (clip.cpp `is_ffn_swapped`).
    const swapped = d !== f && loader.info(layerTensorName('ffnDown', il, 'weight')).shape[0] === d;
    const real = (k: keyof typeof VISION_LAYER_TENSORS) =>
      swapped && k === 'ffnUp' ? 'ffnDown' : swapped && k === 'ffnDown' ? 'ffnUp' : k;
    const w = (k: keyof typeof VISION_LAYER_TENSORS, shape: number[]) =>
      loader.upload(layerTensorName(real(k), il, 'weight'), shape);
    const b = (k: keyof typeof VISION_LAYER_TENSORS, n: number) =>
      loader.upload(layerTensorName(real(k), il, 'bias'), [n]);
    return {
      ln1: { w: w('ln1', [d]), b: b('ln1', d) },
      q: w('attnQ', [d, d]),
      qB: b('attnQ', d),
      k: w('attnK', [d, d]),
      kB: b('attnK', d),
      v: w('attnV', [d, d]),
      vB: b('attnV', d),
      o: w('attnOut', [d, d]),
      oB: b('attnOut', d),
      ln2: { w: w('ln2', [d]), b: b('ln2', d) },
      up: w('ffnUp', [d, f]),
      upB: b('ffnUp', f),
      down: w('ffnDown', [f, d]),
      downB: b('ffnDown', d),
    };
  });
  const patchB = loader.upload(T.patchBias, [d]);
  const pos = loader.upload(T.positionEmbd, [d, nPatches]);
  const preLn = loader.has(T.preLnWeight) ? norm(T.preLnWeight, T.preLnBias) : null;
  const postLn = norm(T.postLnWeight, T.postLnBias);
  const softEmbNorm = loader.upload(T.softEmbNorm, [d]);
  // The host re-layouts first: a backend streaming weights places memory between reads.
  const patch = await patchKernel(loader, config);
  const proj = await projection(loader, d, nEmbdText);
  await loader.loadAll();
  const got = (n: { w: WeightSlot; b: WeightSlot }): VitNorm => ({ w: n.w.get(), b: n.b.get() });
  return {
    patch,
    patchB: patchB.get(),
    pos: pos.get(),
    preLn: preLn ? got(preLn) : null,
    layers: layerSlots.map((l) => ({
      ln1: got(l.ln1),
      q: l.q.get(),
      qB: l.qB.get(),
      k: l.k.get(),
      kB: l.kB.get(),
      v: l.v.get(),
      vB: l.vB.get(),
      o: l.o.get(),
      oB: l.oB.get(),
      ln2: got(l.ln2),
      up: l.up.get(),
      upB: l.upB.get(),
      down: l.down.get(),
      downB: l.downB.get(),
    })),
    postLn: got(postLn),
    softEmbNorm: softEmbNorm.get(),
    proj,
  };
}
