/**
 * A random-weight lfm2 (LFM2-VL) `mmproj` GGUF: the shared ViT trunk (mmproj-vit.ts; its position table is resized to
 * each picture's patch grid at run time) and the projector's LayerNorm + two-layer MLP, with
 * `clip.vision.projector.scale_factor` as llama.cpp's converter writes it. Same shape and seed, same bytes.
 */

import { writeGguf } from '../../src/gguf/write.js';
import { LFM2_TENSORS } from '../../src/vision/projector-lfm2.js';
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

export interface Lfm2MmprojShape extends VitShape {
  /** Hidden width of the projector's MLP. */
  readonly projHidden: number;
  /** Leaves out `mm.input_norm.*` (LFM2-VL's input norm is optional). */
  readonly noInputNorm?: boolean;
}

/** An 8×8 position table of 8² patches, merged 2×2: pictures of 64 to 256 tokens (128² to 256² pixels). */
export const DEFAULT_LFM2_MMPROJ: Lfm2MmprojShape = {
  imageSize: 64,
  patchSize: 8,
  nEmbd: 32,
  nHeads: 4,
  nFf: 48,
  nLayers: 2,
  nEmbdText: 64,
  merge: 2,
  projHidden: 80,
};

/** The mmproj file's bytes. */
export function lfm2Mmproj(seed: number, shape: Lfm2MmprojShape = DEFAULT_LFM2_MMPROJ): Uint8Array {
  const tensors: SyntheticTensor[] = [];
  const add = tensorAdder(mulberry32(seed), shape, tensors);
  const { nEmbd: d, merge: s, nEmbdText, projHidden: hidden } = shape;
  const inDim = d * s * s;
  addVitTensors(add, shape, (shape.imageSize / shape.patchSize) ** 2);
  const T = LFM2_TENSORS;
  if (!shape.noInputNorm) {
    add(T.normW, [inDim], 0.2, 1);
    add(T.normB, [inDim], 0.1);
  }
  add(T.up, [inDim, hidden], 1 / Math.sqrt(inDim));
  add(T.upB, [hidden], 0.1);
  add(T.down, [hidden, nEmbdText], 1 / Math.sqrt(hidden));
  add(T.downB, [nEmbdText], 0.1);
  const metadata = vitMetadata('lfm2', seed, shape);
  metadata['clip.vision.projector.scale_factor'] = s;
  return writeGguf({ metadata: withKeys(metadata, shape), tensors: withoutOmitted(tensors, shape) });
}
