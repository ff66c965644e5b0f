/**
 * `olmoe` (OLMoE-1B-7B): llama's attention with RMSNorm over the whole q and k projections (weights [n_embd] and
 * [n_embd_k_gqa], before rope), NEOX rope, and a mixture of experts — softmax router, top-k, weights not normalised,
 * each expert `feed_forward_length` wide (llama.cpp `olmoe.cpp`).
 */

import { archOptions, readStandardConfig } from '../config.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const options = archOptions({
  ropeKind: 'neox',
  qkNorm: true,
  qkNormScope: 'all-heads',
  moeRouting: { gating: 'softmax', normWeights: false, shared: 'none', expertWidthKey: 'feed_forward_length' },
});

/** olmoe. */
export const olmoe: Architecture = {
  name: 'olmoe',
  config: (meta) => readStandardConfig(meta, 'olmoe', options),
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
};
