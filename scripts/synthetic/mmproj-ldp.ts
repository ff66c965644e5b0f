/**
 * A random-weight ldp (MobileVLM) `mmproj` GGUF: the llava CLIP trunk of mmproj-mlp.ts (pre-LN, class token,
 * quick-GELU, no post-LN) on a 24×24 patch grid (llama.cpp's LDP graph hard-codes it) and the LDP projector
 * (`mm.model.mlp.{1,3}`, two `mm.model.mb_block.{1,2}` MobileNet blocks). Same shape and seed, same bytes.
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

export interface LdpMmprojShape extends VitShape {
  /** Width of the squeeze-excite bottleneck (MobileVLM: n_embd_text / 4). */
  readonly seHidden: number;
}

/** 48² pictures of 2² patches (the 24×24 grid), 144 tokens out. */
export const DEFAULT_LDP_MMPROJ: LdpMmprojShape = {
  imageSize: 48,
  patchSize: 2,
  nEmbd: 16,
  nHeads: 2,
  nFf: 24,
  nLayers: 2,
  nEmbdText: 64,
  merge: 1,
  seHidden: 16,
  preLn: true,
  clip: true,
};

/** The mmproj file's bytes. */
export function ldpMmproj(seed: number, shape: LdpMmprojShape = DEFAULT_LDP_MMPROJ): Uint8Array {
  const tensors: SyntheticTensor[] = [];
  const rand = mulberry32(seed);
  const add = tensorAdder(rand, shape, tensors);
  // The depthwise kernels F16, as converted files store them (ggml-cpu has no F32 × F16-im2col product).
  const addF16 = tensorAdder(rand, { ...shape, matrices: 'f16' }, tensors);
  const { nEmbd: d, nEmbdText: t, seHidden: se } = shape;
  addVitTensors(add, { ...shape, preLn: true, clip: true }, (shape.imageSize / shape.patchSize) ** 2 + 1);
  add(VISION_TENSORS.classEmbd, [d], 0.5);
  add('mm.model.mlp.1.weight', [d, t], 1 / Math.sqrt(d));
  add('mm.model.mlp.1.bias', [t], 0.1);
  add('mm.model.mlp.3.weight', [t, t], 1 / Math.sqrt(t));
  add('mm.model.mlp.3.bias', [t], 0.1);
  for (const b of [1, 2]) {
    const name = (i: number, part: string) => `mm.model.mb_block.${b}.block.${i}.${part}`;
    addF16(name(0, '0.weight'), [3, 3, 1, t], 1 / 3);
    add(name(0, '1.weight'), [t], 0.2, 1);
    add(name(0, '1.bias'), [t], 0.1);
    add(name(1, 'fc1.weight'), [t, se], 1 / Math.sqrt(t));
    add(name(1, 'fc1.bias'), [se], 0.1);
    add(name(1, 'fc2.weight'), [se, t], 1 / Math.sqrt(se));
    add(name(1, 'fc2.bias'), [t], 0.5);
    add(name(2, '0.weight'), [t, t], 1 / Math.sqrt(t));
    add(name(2, '1.weight'), [t], 0.2, 1);
    add(name(2, '1.bias'), [t], 0.1);
  }
  const metadata = vitMetadata('ldp', seed, shape);
  metadata['clip.use_gelu'] = false; // CLIP's quick-GELU
  metadata['clip.vision.image_mean'] = new Float32Array([0.48145466, 0.4578275, 0.40821073]);
  metadata['clip.vision.image_std'] = new Float32Array([0.26862954, 0.26130258, 0.27577711]);
  return writeGguf({ metadata: withKeys(metadata, shape), tensors: withoutOmitted(tensors, shape) });
}
