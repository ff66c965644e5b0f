/**
 * A random-weight Qwen2.5-VL (`qwen2.5vl_merger`) `mmproj` GGUF: two patch kernels without bias, RMSNorm blocks
 * (no norm biases) with Q/K/V/O and gated SiLU FFN biases, the merger's RMSNorm as `v.post_ln`, the merger MLP
 * `mm.0` / `mm.2` (4·d → hidden → text width), `clip.vision.n_wa_pattern` (window attention on the other blocks),
 * with llama.cpp's names and keys. Same shape and seed, same bytes.
 */

import { writeGguf } from '../../src/gguf/write.js';
import { QWEN25VL_TENSORS } from '../../src/vision/projector-qwen25vl.js';
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

export interface Qwen25vlMmprojShape extends VitShape {
  /** Hidden width of the merger MLP. */
  readonly projHidden: number;
  /** Full attention on every n-th block, 112-pixel windows on the others (0: full attention everywhere). */
  readonly windowPattern: number;
}

/** Patch 8 (112-pixel windows of 7×7 merged tokens), head size 8, three blocks, the last with full attention. */
export const DEFAULT_QWEN25VL_MMPROJ: Qwen25vlMmprojShape = {
  imageSize: 64,
  patchSize: 8,
  nEmbd: 32,
  nHeads: 4,
  nFf: 48,
  nLayers: 3,
  nEmbdText: 256,
  merge: 2,
  projHidden: 96,
  windowPattern: 3,
};

/** The mmproj file's bytes. */
export function qwen25vlMmproj(seed: number, shape: Qwen25vlMmprojShape = DEFAULT_QWEN25VL_MMPROJ): Uint8Array {
  const tensors: SyntheticTensor[] = [];
  const add = tensorAdder(mulberry32(seed), shape, tensors);
  const { patchSize: p, nEmbd: d, nFf: f, nEmbdText, projHidden: hidden } = shape;
  const T = QWEN25VL_TENSORS;
  add(VISION_TENSORS.patchEmbd, [p, p, 3, d], 1 / Math.sqrt(3 * p * p));
  add(T.patch1, [p, p, 3, d], 1 / Math.sqrt(3 * p * p));
  for (let il = 0; il < shape.nLayers; il++) {
    const W = (k: keyof typeof VISION_LAYER_TENSORS, dims: number[], spread: number, center = 0) =>
      add(layerTensorName(k, il, 'weight'), dims, spread, center);
    const B = (k: keyof typeof VISION_LAYER_TENSORS, n: number) => add(layerTensorName(k, il, 'bias'), [n], 0.1);
    W('ln1', [d], 0.2, 1);
    for (const k of ['attnQ', 'attnK', 'attnV', 'attnOut'] as const) {
      W(k, [d, d], 1 / Math.sqrt(d));
      B(k, d);
    }
    W('ln2', [d], 0.2, 1);
    W('ffnGate', [d, f], 1 / Math.sqrt(d));
    B('ffnGate', f);
    W('ffnUp', [d, f], 1 / Math.sqrt(d));
    B('ffnUp', f);
    W('ffnDown', [f, d], 1 / Math.sqrt(f));
    B('ffnDown', d);
  }
  add(VISION_TENSORS.postLnWeight, [d], 0.2, 1);
  add(T.up, [4 * d, hidden], 1 / Math.sqrt(4 * d));
  add(T.upB, [hidden], 0.1);
  add(T.down, [hidden, nEmbdText], 1 / Math.sqrt(hidden));
  add(T.downB, [nEmbdText], 0.1);
  const metadata = vitMetadata('qwen2.5vl_merger', seed, shape);
  delete metadata['clip.use_gelu'];
  metadata['clip.use_silu'] = true;
  metadata['clip.vision.spatial_merge_size'] = 2;
  metadata['clip.vision.n_wa_pattern'] = shape.windowPattern;
  return writeGguf({ metadata: withKeys(metadata, shape), tensors: withoutOmitted(tensors, shape) });
}
