/**
 * `qwen35moe` (Qwen3.5-35B-A3B, 122B-A10B, 397B-A17B): qwen35's layers (gated DeltaNet blocks and gated full
 * attention, see `qwen35.ts`) whose FFN is on every layer a mixture of experts — softmax router, top-k, weights
 * normalised to sum 1 — plus a shared expert of `expert_shared_feed_forward_length` (default n_ff) scaled by
 * sigmoid(x · ffn_gate_inp_shexp); the FFN's pre-norm is `post_attention_norm` (llama.cpp `qwen35moe.cpp`).
 */

import { archOptions } from '../config.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';
import { readQwen35Config } from './qwen35.js';

const options = archOptions({
  ropeKind: 'neox',
  qkNorm: true,
  moeRouting: { gating: 'softmax', normWeights: true, shared: 'gated' },
});

/** qwen35moe. */
export const qwen35moe: Architecture = {
  name: 'qwen35moe',
  config: (meta) => readQwen35Config(meta, 'qwen35moe', options),
  tensors: { ...LLAMA_CPP_TENSOR_NAMES, ffnNorm: 'blk.{i}.post_attention_norm.weight' },
  options,
};
