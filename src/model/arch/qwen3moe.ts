/**
 * `qwen3moe` (Qwen3-30B-A3B, Qwen3-235B-A22B): qwen3's attention (per-head q/k RMSNorm, NEOX rope) with a mixture of
 * experts in place of the FFN — softmax router, top-k, weights normalised to sum 1, no shared expert (llama.cpp
 * `qwen3moe.cpp`).
 */

import { archOptions, readStandardConfig } from '../config.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const options = archOptions({
  ropeKind: 'neox',
  qkNorm: true,
  moeRouting: { gating: 'softmax', normWeights: true, shared: 'none' },
});

/** qwen3moe. */
export const qwen3moe: Architecture = {
  name: 'qwen3moe',
  config: (meta) => readStandardConfig(meta, 'qwen3moe', options),
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
};
