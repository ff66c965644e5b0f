/**
 * A random-weight Qwen3-VL (`qwen3vl_merger`) `mmproj` GGUF: two patch kernels (the first with a bias), a learned
 * position table of (imageSize / patch)² rows (resized to each picture), LayerNorm blocks with fused QKV and a GELU
 * FFN (biases), deepstack mergers after the first `deepstack` blocks, the post-LN and the merger `mm.0` / `mm.2`,
 * with llama.cpp's names and keys. Same shape and seed, same bytes.
 */

import { writeGguf } from '../../src/gguf/write.js';
import { QWEN3VL_TENSORS } from '../../src/vision/projector-qwen3vl.js';
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

export interface Qwen3vlMmprojShape extends VitShape {
  /** Hidden width of the mergers' MLPs. */
  readonly projHidden: number;
  /** Blocks 0 … deepstack−1 have a deepstack merger (the text model's n_deepstack_layers must match). */
  readonly deepstack: number;
}

/** Patch 8, a 6² position table, head size 8, three blocks, two deepstack mergers. */
export const DEFAULT_QWEN3VL_MMPROJ: Qwen3vlMmprojShape = {
  imageSize: 48,
  patchSize: 8,
  nEmbd: 32,
  nHeads: 4,
  nFf: 48,
  nLayers: 3,
  nEmbdText: 256,
  merge: 2,
  projHidden: 96,
  deepstack: 2,
};

/** The mmproj file's bytes. */
export function qwen3vlMmproj(seed: number, shape: Qwen3vlMmprojShape = DEFAULT_QWEN3VL_MMPROJ): Uint8Array {
  const tensors: SyntheticTensor[] = [];
  const add = tensorAdder(mulberry32(seed), shape, tensors);
  const { patchSize: p, nEmbd: d, nFf: f, nEmbdText, projHidden: hidden } = shape;
  const T = QWEN3VL_TENSORS;
  const side = shape.imageSize / p;
  add(VISION_TENSORS.patchEmbd, [p, p, 3, d], 1 / Math.sqrt(3 * p * p));
  add(T.patch1, [p, p, 3, d], 1 / Math.sqrt(3 * p * p));
  add(VISION_TENSORS.patchBias, [d], 0.1);
  add(VISION_TENSORS.positionEmbd, [d, side * side], 0.5);
  for (let il = 0; il < shape.nLayers; il++) {
    const W = (k: keyof typeof VISION_LAYER_TENSORS, dims: number[], spread: number, center = 0) =>
      add(layerTensorName(k, il, 'weight'), dims, spread, center);
    const B = (k: keyof typeof VISION_LAYER_TENSORS, n: number) => add(layerTensorName(k, il, 'bias'), [n], 0.1);
    W('ln1', [d], 0.2, 1);
    B('ln1', d);
    W('attnQkv', [d, 3 * d], 1 / Math.sqrt(d));
    B('attnQkv', 3 * d);
    W('attnOut', [d, d], 1 / Math.sqrt(d));
    B('attnOut', d);
    W('ln2', [d], 0.2, 1);
    B('ln2', d);
    W('ffnUp', [d, f], 1 / Math.sqrt(d));
    B('ffnUp', f);
    W('ffnDown', [f, d], 1 / Math.sqrt(f));
    B('ffnDown', d);
    if (il < shape.deepstack) {
      const name = (k: string, part: string) => `${k.replace('{il}', String(il))}.${part}`;
      add(name(T.dsNorm, 'weight'), [4 * d], 0.2, 1);
      add(name(T.dsNorm, 'bias'), [4 * d], 0.1);
      add(name(T.dsFc1, 'weight'), [4 * d, hidden], 1 / Math.sqrt(4 * d));
      add(name(T.dsFc1, 'bias'), [hidden], 0.1);
      add(name(T.dsFc2, 'weight'), [hidden, nEmbdText], 1 / Math.sqrt(hidden));
      add(name(T.dsFc2, 'bias'), [nEmbdText], 0.1);
    }
  }
  add(VISION_TENSORS.postLnWeight, [d], 0.2, 1);
  add(VISION_TENSORS.postLnBias, [d], 0.1);
  add(T.up, [4 * d, hidden], 1 / Math.sqrt(4 * d));
  add(T.upB, [hidden], 0.1);
  add(T.down, [hidden, nEmbdText], 1 / Math.sqrt(hidden));
  add(T.downB, [nEmbdText], 0.1);
  const metadata = vitMetadata('qwen3vl_merger', seed, shape);
  metadata['clip.vision.spatial_merge_size'] = 2;
  metadata['clip.vision.projection_dim'] = nEmbdText;
  return writeGguf({ metadata: withKeys(metadata, shape), tensors: withoutOmitted(tensors, shape) });
}
