/**
 * `qwen2moe` (Qwen1.5-MoE-A2.7B, Qwen2-57B-A14B): qwen2's attention (Q/K/V biases, NEOX rope) with a mixture of
 * experts — softmax router, top-k, weights not normalised — plus a shared expert of `expert_shared_feed_forward_length`
 * whose output is scaled by sigmoid(x · ffn_gate_inp_shexp) (llama.cpp `qwen2moe.cpp`).
 */

import { archOptions, readStandardConfig } from '../config.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const options = archOptions({
  ropeKind: 'neox',
  moeRouting: { gating: 'softmax', normWeights: false, shared: 'gated' },
});

/** qwen2moe. */
export const qwen2moe: Architecture = {
  name: 'qwen2moe',
  config: (meta) => readStandardConfig(meta, 'qwen2moe', options),
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
};
