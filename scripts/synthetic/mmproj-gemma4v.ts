/**
 * A random-weight gemma4v (Gemma 4 vision) `mmproj` GGUF: patch conv without bias, the column/row position tables,
 * RMSNorm blocks with per-head Q/K norms, post-attention/post-FFN norms, gated GELU FFNs and a scalar output scale,
 * the standardisation vectors and the projection, plus a few Gemma4ClippableLinear clamp scalars that bite — with
 * llama.cpp's names and keys. Same shape and seed, same bytes.
 */

import { GgmlType } from '../../src/gguf/types.js';
import { writeGguf } from '../../src/gguf/write.js';
import { GEMMA4V_TENSORS } from '../../src/vision/projector-gemma4v.js';
import { layerTensorName, type VISION_LAYER_TENSORS, VISION_TENSORS } from '../../src/vision/tensor-names.js';
import { mulberry32 } from '../deterministic-random.mjs';
import {
  type SyntheticTensor,
  tensorAdder,
  type VitShape,
  vitMetadata,
  withKeys,
  withoutOmitted,
} from './mmproj-vit.js';

export interface Gemma4vMmprojShape extends VitShape {
  /** Rows of each position table (the most patches per side). */
  readonly posSize: number;
}

/** 8² patches pooled 3×3, head size 8; pictures of 70 to 1120 tokens (the minimum is ~200² pixels). */
export const DEFAULT_GEMMA4V_MMPROJ: Gemma4vMmprojShape = {
  imageSize: 224,
  patchSize: 8,
  nEmbd: 32,
  nHeads: 4,
  nFf: 48,
  nLayers: 2,
  nEmbdText: 64,
  merge: 3,
  posSize: 64,
};

/** The mmproj file's bytes. */
export function gemma4vMmproj(seed: number, shape: Gemma4vMmprojShape = DEFAULT_GEMMA4V_MMPROJ): Uint8Array {
  const tensors: SyntheticTensor[] = [];
  const add = tensorAdder(mulberry32(seed), shape, tensors);
  const { patchSize: p, nEmbd: d, nFf: f, nEmbdText } = shape;
  const hd = d / shape.nHeads;
  const scalar = (name: string, v: number) =>
    tensors.push({ name, type: GgmlType.F32, shape: [1], data: new Uint8Array(Float32Array.of(v).buffer) });
  add(VISION_TENSORS.patchEmbd, [p, p, 3, d], 1 / Math.sqrt(3 * p * p));
  add(GEMMA4V_TENSORS.positions, [d, shape.posSize, 2], 0.5);
  for (let il = 0; il < shape.nLayers; il++) {
    const W = (k: keyof typeof VISION_LAYER_TENSORS, dims: number[], spread: number, center = 0) =>
      add(layerTensorName(k, il, 'weight'), dims, spread, center);
    W('ln1', [d], 0.2, 1);
    for (const k of ['attnQ', 'attnK', 'attnV', 'attnOut'] as const) W(k, [d, d], 1 / Math.sqrt(d));
    W('attnQNorm', [hd], 0.2, 1);
    W('attnKNorm', [hd], 0.2, 1);
    W('attnPostNorm', [d], 0.2, 1);
    W('ln2', [d], 0.2, 1);
    W('ffnGate', [d, f], 1 / Math.sqrt(d));
    W('ffnUp', [d, f], 1 / Math.sqrt(d));
    W('ffnDown', [f, d], 1 / Math.sqrt(f));
    W('ffnPostNorm', [d], 0.2, 1);
    scalar(layerTensorName('outScale', il, 'weight'), 0.9 - 0.1 * il);
  }
  add(GEMMA4V_TENSORS.stdBias, [d], 0.3);
  add(GEMMA4V_TENSORS.stdScale, [d], 0.2, 1);
  add(GEMMA4V_TENSORS.proj, [d, nEmbdText], 1 / Math.sqrt(d));
  // Clamps that bite: the first block's Q input and FFN-down output, the projection's output.
  scalar(layerTensorName('attnQ', 0, 'weight').replace(/weight$/, 'input_max'), 1.2);
  scalar(layerTensorName('attnQ', 0, 'weight').replace(/weight$/, 'input_min'), -1.2);
  scalar(layerTensorName('ffnDown', 0, 'weight').replace(/weight$/, 'output_max'), 0.5);
  scalar(GEMMA4V_TENSORS.proj.replace(/weight$/, 'output_min'), -0.6);
  const metadata = vitMetadata('gemma4v', seed, shape);
  metadata['clip.vision.projector.scale_factor'] = shape.merge;
  return writeGguf({ metadata: withKeys(metadata, shape), tensors: withoutOmitted(tensors, shape) });
}
