/**
 * A random-weight idefics3 (SmolVLM) `mmproj` GGUF: the shared ViT trunk (mmproj-vit.ts) and the pixel-shuffle
 * projector's one matrix `mm.model.fc.weight`, with `clip.vision.projector.scale_factor` and
 * `clip.vision.preproc_image_size` (the longest side images are resized to before tiling) as llama.cpp's converter
 * writes them. Same shape and seed, same bytes.
 */

import { writeGguf } from '../../src/gguf/write.js';
import { IDEFICS3_FC } from '../../src/vision/projector-idefics3.js';
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

export interface Idefics3MmprojShape extends VitShape {
  /** `clip.vision.preproc_image_size`. */
  readonly longestEdge: number;
}

/** 32² tiles of 8² patches shuffled 2×2 (4 tokens a tile); images resized to 80 on their longest side. */
export const DEFAULT_IDEFICS3_MMPROJ: Idefics3MmprojShape = {
  imageSize: 32,
  patchSize: 8,
  nEmbd: 32,
  nHeads: 4,
  nFf: 48,
  nLayers: 2,
  nEmbdText: 64,
  merge: 2,
  longestEdge: 80,
};

/** The mmproj file's bytes. */
export function idefics3Mmproj(seed: number, shape: Idefics3MmprojShape = DEFAULT_IDEFICS3_MMPROJ): Uint8Array {
  const tensors: SyntheticTensor[] = [];
  const add = tensorAdder(mulberry32(seed), shape, tensors);
  const { nEmbd: d, merge: s, nEmbdText } = shape;
  addVitTensors(add, shape, (shape.imageSize / shape.patchSize) ** 2);
  add(IDEFICS3_FC, [d * s * s, nEmbdText], 1 / Math.sqrt(d * s * s));
  const metadata = vitMetadata('idefics3', seed, shape);
  metadata['clip.vision.projector.scale_factor'] = s;
  metadata['clip.vision.preproc_image_size'] = shape.longestEdge;
  return writeGguf({ metadata: withKeys(metadata, shape), tensors: withoutOmitted(tensors, shape) });
}
