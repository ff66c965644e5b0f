/**
 * `granite` (Granite 3.x dense): llama's block with four multipliers from the file, as llama.cpp's granite graph —
 * `embedding_scale` on the token embeddings, `residual_scale` on each sub-block's output before its residual add,
 * `attention.scale` as the q·k multiplier (default 1/√head_dim) and the logits divided by `logit_scale` (required);
 * an absent or zero multiplier is no multiplication. `rope.scaling.finetuned` = false switches rope off on every
 * layer (llama.cpp's granite reads it as a rope switch, default true). Optional FFN biases (never published for
 * Granite 3 dense) are not read.
 */

import { archOptions, modelMetadata, readStandardConfig } from '../config.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const options = archOptions();

/** granite. */
export const granite: Architecture = {
  name: 'granite',
  config(meta) {
    const base = readStandardConfig(meta, 'granite', options);
    const r = modelMetadata(meta, 'granite');
    const multiplier = (suffix: string, why: string): number => r.finite(r.archKey(suffix), 0, { min: 0 }, why);
    const logitScale = r.finite(
      r.archKey('logit_scale'),
      undefined,
      { min: 0, exclusiveMin: true },
      'the logit divisor',
    );
    const embeddingScale = multiplier('embedding_scale', 'the embedding multiplier');
    const residualScale = multiplier('residual_scale', 'the residual multiplier');
    const attentionScale = multiplier('attention.scale', 'the attention multiplier');
    const rope = r.optionalBool(r.archKey('rope.scaling.finetuned')) ?? true;
    return {
      ...base,
      logitScale: Math.fround(1 / logitScale),
      embeddingScale: embeddingScale === 0 ? 1 : embeddingScale,
      residualScale: residualScale === 0 ? 1 : residualScale,
      attentionScale: attentionScale === 0 ? base.attentionScale : attentionScale,
      noRopeLayers: new Array<boolean>(base.nLayers).fill(!rope),
    };
  },
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
};
