/**
 * A random-weight gemma3 `mmproj` GGUF (SigLIP ViT + average pooling + soft-embedding norm + projection) with
 * llama.cpp's keys and tensor names (`tools/mtmd/clip-impl.h`), every tensor F32, drawn from mulberry32(`seed`):
 * the same bytes for the same shape and seed, so tests regenerate it and compare with llama.cpp's recorded answers.
 */

import { writeGguf } from '../../src/gguf/write.js';
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

/** The encoder's shape; defaults make a tiny model (8×8 patches pooled to 2×2 output tokens). */
export type Gemma3MmprojShape = VitShape;

export const DEFAULT_GEMMA3_MMPROJ: Gemma3MmprojShape = {
  imageSize: 64,
  patchSize: 8,
  nEmbd: 32,
  nHeads: 4,
  nFf: 48,
  nLayers: 2,
  nEmbdText: 64,
  merge: 4,
};

/** The mmproj file's bytes. */
export function gemma3Mmproj(seed: number, shape: Gemma3MmprojShape = DEFAULT_GEMMA3_MMPROJ): Uint8Array {
  const tensors: SyntheticTensor[] = [];
  const add = tensorAdder(mulberry32(seed), shape, tensors);
  const { nEmbd: d, nEmbdText } = shape;
  addVitTensors(add, shape, (shape.imageSize / shape.patchSize) ** 2);
  add(VISION_TENSORS.softEmbNorm, [d], 0.2, 1);
  add(VISION_TENSORS.inputProjection, [nEmbdText, d], 1 / Math.sqrt(d));
  const metadata = vitMetadata('gemma3', seed, shape);
  if (shape.merge !== 4) metadata['clip.vision.projector.scale_factor'] = shape.merge;
  return writeGguf({ metadata: withKeys(metadata, shape), tensors: withoutOmitted(tensors, shape) });
}
