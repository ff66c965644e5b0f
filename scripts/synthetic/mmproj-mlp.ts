/**
 * A random-weight mlp (LLaVA-1.5) `mmproj` GGUF: a CLIP-style trunk (mmproj-vit.ts with `clip`: pre-LN, no patch bias,
 * no post-LN, quick-GELU) with a class token (`v.class_embd`, one more position row), and the two-layer MLP projector
 * `mm.0` / `mm.2`. Same shape and seed, same bytes.
 */

import { writeGguf } from '../../src/gguf/write.js';
import { MLP_TENSORS } from '../../src/vision/projector-mlp.js';
import { VISION_TENSORS } from '../../src/vision/tensor-names.js';
import { mulberry32 } from '../deterministic-random.mjs';
import {
  addVitTensors,
  type SyntheticTensor,
  tensorAdder,
  type VitShape,
  vitMetadata,
  withKeys,
  withoutOmitted,
} from './mmproj-vit.js';

export interface MlpMmprojShape extends VitShape {
  /** Hidden width of the projector's MLP. */
  readonly projHidden: number;
}

/** 48² pictures of 8² patches: 36 tokens; three blocks (llama.cpp runs two). */
export const DEFAULT_MLP_MMPROJ: MlpMmprojShape = {
  imageSize: 48,
  patchSize: 8,
  nEmbd: 32,
  nHeads: 4,
  nFf: 48,
  nLayers: 3,
  nEmbdText: 64,
  merge: 1,
  projHidden: 80,
  preLn: true,
  clip: true,
};

/** The mmproj file's bytes. */
export function mlpMmproj(seed: number, shape: MlpMmprojShape = DEFAULT_MLP_MMPROJ): Uint8Array {
  const tensors: SyntheticTensor[] = [];
  const add = tensorAdder(mulberry32(seed), shape, tensors);
  const { nEmbd: d, nEmbdText, projHidden: hidden } = shape;
  addVitTensors(add, { ...shape, preLn: true, clip: true }, (shape.imageSize / shape.patchSize) ** 2 + 1);
  add(VISION_TENSORS.classEmbd, [d], 0.5);
  const T = MLP_TENSORS;
  // Explicit feature layers (`clip.vision.feature_layer`) are concatenated per patch before the MLP.
  const features = shape.keys?.['clip.vision.feature_layer'];
  const stack = Array.isArray(features) ? features.length : 1;
  add(T.up, [d * stack, hidden], 1 / Math.sqrt(d * stack));
  add(T.upB, [hidden], 0.1);
  add(T.down, [hidden, nEmbdText], 1 / Math.sqrt(hidden));
  add(T.downB, [nEmbdText], 0.1);
  const metadata = vitMetadata('mlp', seed, shape);
  metadata['clip.use_gelu'] = false; // CLIP's quick-GELU
  metadata['clip.vision.image_mean'] = new Float32Array([0.48145466, 0.4578275, 0.40821073]);
  metadata['clip.vision.image_std'] = new Float32Array([0.26862954, 0.26130258, 0.27577711]);
  return writeGguf({ metadata: withKeys(metadata, shape), tensors: withoutOmitted(tensors, shape) });
}
