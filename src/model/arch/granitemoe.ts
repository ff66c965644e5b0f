/**
 * `granitemoe` (Granite 3.x MoE 1B-A400M / 3B-A800M, Granite MoE Shared): granite's block and multipliers
 * (`embedding_scale`, `residual_scale`, `attention.scale`, 1 / `logit_scale`; absent or zero = none) with a mixture of
 * experts each `feed_forward_length` wide — softmax router, top-k, weights normalised to sum 1 — plus an ungated shared
 * expert when `expert_shared_feed_forward_length` > 0; the residual scale multiplies the experts' (and shared) sum
 * (llama.cpp `granite-moe.cpp`, `granite.cpp`).
 */

import { archOptions, modelMetadata, readStandardConfig } from '../config.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const NAME = 'granitemoe';
const options = archOptions({
  moeRouting: { gating: 'softmax', normWeights: true, shared: 'plain', expertWidthKey: 'feed_forward_length' },
});

/** granitemoe. */
export const granitemoe: Architecture = {
  name: NAME,
  config(meta) {
    const base = readStandardConfig(meta, NAME, options);
    const r = modelMetadata(meta, NAME);
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
    const hasShared = r.count(r.archKey('expert_shared_feed_forward_length'), 0) > 0;
    const moe = base.moe!; // experts are required for this architecture (readStandardConfig checked them)
    return {
      ...base,
      logitScale: Math.fround(1 / logitScale),
      embeddingScale: embeddingScale === 0 ? 1 : embeddingScale,
      residualScale: residualScale === 0 ? 1 : residualScale,
      attentionScale: attentionScale === 0 ? base.attentionScale : attentionScale,
      noRopeLayers: new Array<boolean>(base.nLayers).fill(!rope),
      moe: { ...moe, shared: hasShared ? 'plain' : 'none', sharedDim: hasShared ? moe.sharedDim : 0 },
    };
  },
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
};
