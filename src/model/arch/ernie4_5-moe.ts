/**
 * `ernie4_5-moe` (ERNIE-4.5-21B-A3B): llama's attention (norm rope, optional output bias) and, after
 * `leading_dense_block_count` dense layers, a mixture of experts on every `interleave_moe_layer_step`-th layer —
 * softmax router whose selection adds the optional per-expert bias `exp_probs_b`, weights normalised to sum 1, plus an
 * ungated shared expert when `expert_shared_feed_forward_length` > 0 (llama.cpp `ernie4-5.cpp`, `ernie4-5-moe.cpp`).
 */

import { archOptions, modelMetadata, readStandardConfig } from '../config.js';
import { MODEL_LIMITS as L } from '../model-limits.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const NAME = 'ernie4_5-moe';
const options = archOptions({ moeRouting: { gating: 'softmax', normWeights: true, shared: 'plain' } });

/** ernie4_5-moe. */
export const ernie4_5Moe: Architecture = {
  name: NAME,
  config(meta) {
    const base = readStandardConfig(meta, NAME, options);
    const r = modelMetadata(meta, NAME);
    const step = r.boundedCount(r.archKey('interleave_moe_layer_step'), undefined, 1, L.maxLayers, 'maxLayers');
    const lead = r.boundedCount(r.archKey('leading_dense_block_count'), 0, 0, base.nLayers, 'block_count');
    const hasShared = r.count(r.archKey('expert_shared_feed_forward_length'), 0) > 0;
    const moe = base.moe!; // experts are required for this architecture (readStandardConfig checked them)
    return {
      ...base,
      moe: {
        ...moe,
        shared: hasShared ? 'plain' : 'none',
        sharedDim: hasShared ? moe.sharedDim : 0,
        layerIsMoe: Array.from({ length: base.nLayers }, (_, il) => il >= lead && (il + 1) % step === 0),
      },
    };
  },
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
};
