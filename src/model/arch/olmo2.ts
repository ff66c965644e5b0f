/**
 * `olmo2` (OLMo 2, OLMo 3): no pre-norms — each sub-block reads the raw residual stream and RMS-normalises its
 * output before the residual add (`post_attention_norm`, `post_ffw_norm`); q and k are RMS-normalised over all heads
 * at once (weights of n_head·head_dim and n_head_kv·head_dim values) before NEOX rope. With
 * `attention.sliding_window` > 0 (OLMo 3) layers slide by `attention.sliding_window_pattern` (default: every 4th layer
 * global), and sliding layers rotate with the global base but no scaling (llama.cpp's olmo2 graph: freq_scale 1,
 * no YaRN), as llama.cpp.
 */

import { archOptions, modelMetadata, readSlidingLayers, readStandardConfig } from '../config.js';
import { MODEL_LIMITS } from '../model-limits.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';
import { requireSquareAttention } from '../square-attention.js';

const options = archOptions({
  ropeKind: 'neox',
  qkNorm: true,
  qkNormScope: 'all-heads',
  preNorms: false,
  postNorms: true,
});

/** olmo2. */
export const olmo2: Architecture = {
  name: 'olmo2',
  config(meta) {
    const base = requireSquareAttention(readStandardConfig(meta, 'olmo2', options));
    const r = modelMetadata(meta, 'olmo2');
    const slidingWindow = r.boundedCount(
      r.archKey('attention.sliding_window'),
      0,
      0,
      MODEL_LIMITS.maxContextLength,
      'maxContextLength',
    );
    if (slidingWindow === 0) return base;
    return {
      ...base,
      slidingWindow,
      slidingLayers: readSlidingLayers(meta, 'olmo2', base.nLayers, 4),
      ropeSwa: { theta: base.ropeTheta, freqScale: 1 },
    };
  },
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
};
