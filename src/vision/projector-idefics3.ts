/**
 * The Idefics3 / SmolVLM projector (llama.cpp `clip_graph_siglip` for `PROJECTOR_TYPE_IDEFICS3`,
 * `clip_graph::build_patch_merge_permute` then `build_mm(mm.model.fc.weight)`): the ViT's patch grid is pixel-shuffled —
 * each `merge`×`merge` block of patches becomes one token whose vector is the block's patch vectors concatenated
 * (row within the block outer, column inner; the grid zero-padded up to a multiple of `merge`) — then one linear
 * layer without bias maps it to the text model's width.
 */

import { matmulRows, pixelShuffle } from './pixel-shuffle.js';
import type { VisionConfig } from './vision-config.js';

/** `mm.model.fc.weight`: ggml [d · merge², nEmbdText] (row j = output j). */
export const IDEFICS3_FC = 'mm.model.fc.weight';

/** The projector's tensors and their ggml shapes. */
export function idefics3Tensors(config: VisionConfig, nEmbdText: number): Record<string, number[]> {
  return { [IDEFICS3_FC]: [config.nEmbd * config.merge * config.merge, nEmbdText] };
}

/** The tile's embeddings. vit: [side², d] (the ViT's output) → [(side / merge)², nEmbdText]. */
export function projectIdefics3(
  config: VisionConfig,
  mm: Readonly<Record<string, Float32Array>>,
  vit: Float32Array,
  side: number,
  nEmbdText: number,
): Float32Array {
  const { nEmbd: d, merge: s } = config;
  return matmulRows(pixelShuffle(vit, side, side, d, s), d * s * s, mm[IDEFICS3_FC], nEmbdText);
}
