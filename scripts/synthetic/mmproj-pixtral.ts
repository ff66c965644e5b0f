/**
 * A random-weight pixtral (Pixtral / Mistral Small 3.1) `mmproj` GGUF: an RMSNorm ViT without biases or a position
 * table (2-D RoPE), gated SiLU FFNs, then — with `merge` > 1, as Mistral Small 3.1 — `mm.input_norm` and
 * `mm.patch_merger`, the GELU MLP `mm.1` / `mm.2` and the `[IMG_BREAK]` embedding, with llama.cpp's names and keys.
 * Same shape and seed, same bytes.
 */

import { writeGguf } from '../../src/gguf/write.js';
import { PIXTRAL_TENSORS } from '../../src/vision/projector-pixtral.js';
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

export interface PixtralMmprojShape extends VitShape {
  /** Hidden width of the projector's MLP. */
  readonly projHidden: number;
}

/** 8² patches, head size 8, merged 2×2 (Mistral Small 3.1's merger). */
export const DEFAULT_PIXTRAL_MMPROJ: PixtralMmprojShape = {
  imageSize: 64,
  patchSize: 8,
  nEmbd: 32,
  nHeads: 4,
  nFf: 48,
  nLayers: 2,
  nEmbdText: 64,
  merge: 2,
  projHidden: 64,
};

/** The mmproj file's bytes. */
export function pixtralMmproj(seed: number, shape: PixtralMmprojShape = DEFAULT_PIXTRAL_MMPROJ): Uint8Array {
  const tensors: SyntheticTensor[] = [];
  const add = tensorAdder(mulberry32(seed), shape, tensors);
  const { patchSize: p, nEmbd: d, nFf: f, merge: m, nEmbdText, projHidden: hidden } = shape;
  add(VISION_TENSORS.patchEmbd, [p, p, 3, d], 1 / Math.sqrt(3 * p * p));
  add(VISION_TENSORS.preLnWeight, [d], 0.2, 1);
  for (let il = 0; il < shape.nLayers; il++) {
    const W = (k: keyof typeof VISION_LAYER_TENSORS, dims: number[], spread: number, center = 0) =>
      add(layerTensorName(k, il, 'weight'), dims, spread, center);
    W('ln1', [d], 0.2, 1);
    for (const k of ['attnQ', 'attnK', 'attnV', 'attnOut'] as const) W(k, [d, d], 1 / Math.sqrt(d));
    W('ln2', [d], 0.2, 1);
    W('ffnGate', [d, f], 1 / Math.sqrt(d));
    W('ffnUp', [d, f], 1 / Math.sqrt(d));
    W('ffnDown', [f, d], 1 / Math.sqrt(f));
  }
  const T = PIXTRAL_TENSORS;
  if (m > 1) {
    add(T.inputNorm, [d], 0.2, 1);
    add(T.merger, [d * m * m, d], 1 / Math.sqrt(d * m * m));
  }
  add(T.up, [d, hidden], 1 / Math.sqrt(d));
  add(T.upB, [hidden], 0.1);
  add(T.down, [hidden, nEmbdText], 1 / Math.sqrt(hidden));
  add(T.downB, [nEmbdText], 0.1);
  add(T.imgBreak, [nEmbdText], 0.5);
  const metadata = vitMetadata('pixtral', seed, shape);
  delete metadata['clip.use_gelu'];
  metadata['clip.use_silu'] = true;
  metadata['clip.vision.attention.layer_norm_epsilon'] = 1e-5;
  if (m > 1) metadata['clip.vision.spatial_merge_size'] = m;
  return writeGguf({ metadata: withKeys(metadata, shape), tensors: withoutOmitted(tensors, shape) });
}
