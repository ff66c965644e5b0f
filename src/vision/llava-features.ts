/**
 * Which hidden states of the CLIP trunk a llava projector (`mlp`, `ldp`) reads, as llama.cpp's `clip_graph_llava`:
 * without `clip.vision.feature_layer` every block but the last runs and its output is taken; with it, blocks run up to
 * the deepest listed layer and the listed hidden states are concatenated per token, in layer order (0: the trunk's
 * input after the pre-LN; k: the output of block k − 1, the deepest one after the post-LN when there is one).
 */

import type { VisionConfig } from './vision-config.js';

/** The trunk's part of a llava encode. */
export interface LlavaFeatures {
  /** Blocks run. */
  readonly blocks: number;
  /** Hidden-state indices concatenated, ascending; empty: the last state alone. */
  readonly stack: readonly number[];
}

/** The blocks and hidden states a llava projector takes from `config`'s trunk. */
export function llavaFeatures(config: VisionConfig): LlavaFeatures {
  const deepest = Math.max(-1, ...config.featureLayers);
  const blocks = deepest < 0 ? Math.max(0, config.nLayers - 1) : deepest;
  const stack = [...new Set(config.featureLayers)].filter((l) => l >= 0 && l <= blocks).sort((a, b) => a - b);
  return { blocks, stack };
}

/** Width of the rows the llava projector reads: n_embd per stacked hidden state. */
export function llavaWidth(config: VisionConfig): number {
  return config.nEmbd * Math.max(1, llavaFeatures(config).stack.length);
}

/** k hidden states of [n, d] → [n, k · d], row by row (ggml_concat along dim 0). */
export function concatRows(parts: readonly Float32Array[], n: number, d: number): Float32Array {
  const out = new Float32Array(n * d * parts.length);
  for (let t = 0; t < n; t++) {
    parts.forEach((p, j) => {
      out.set(p.subarray(t * d, (t + 1) * d), (t * parts.length + j) * d);
    });
  }
  return out;
}
