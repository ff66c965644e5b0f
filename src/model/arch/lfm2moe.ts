/**
 * `lfm2moe` (LFM2-8B-A1B, LFM2-24B-A2B): lfm2's layers (short gated convolutions where `attention.head_count_kv` is 0,
 * GQA attention with per-head q/k RMSNorm elsewhere; no sliding window) whose FFN is, after
 * `leading_dense_block_count` dense layers, a mixture of experts on every layer kind: router probabilities by
 * `expert_gating_func` (softmax or sigmoid), top-k selected with the required per-expert bias `exp_probs_b` added,
 * weights normalised to sum 1, no shared expert (llama.cpp `lfm2moe.cpp`, whose graph is lfm2's).
 */

import { LlmError } from '../../errors.js';
import { archOptions, modelMetadata } from '../config.js';
import type { MoeRouting } from '../moe-config.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';
import { readLfm2Config } from './lfm2.js';

const NAME = 'lfm2moe';
const options = archOptions({
  ropeKind: 'neox',
  qkNorm: true,
  moeRouting: { gating: 'sigmoid', normWeights: true, shared: 'none', requireSelectionBias: true },
});

/** llama.cpp's `llama_expert_gating_func_type` values this runtime computes. */
const GATING: Readonly<Record<number, MoeRouting['gating']>> = { 1: 'softmax', 2: 'sigmoid' };

/** lfm2moe. */
export const lfm2moe: Architecture = {
  name: NAME,
  config(meta) {
    const base = readLfm2Config(meta, NAME, options, false);
    const r = modelMetadata(meta, NAME);
    const moe = base.moe!; // experts are required for this architecture (readStandardConfig checked them)
    const widthKey = r.archKey('expert_feed_forward_length');
    if (!r.has(widthKey)) {
      throw new LlmError('gguf-invalid', `reading model config: '${widthKey}' is missing; ${NAME} requires it`, {
        details: { key: widthKey },
      });
    }
    const gatingKey = r.archKey('expert_gating_func');
    const code = r.count(gatingKey);
    const gating = GATING[code];
    if (gating === undefined) {
      throw new LlmError(
        code === 0 ? 'gguf-invalid' : 'unsupported-arch',
        `reading model config: '${gatingKey}' = ${code} is not a router function this runtime computes (1 softmax, 2 sigmoid)`,
        { details: { key: gatingKey, value: code } },
      );
    }
    const lead = r.boundedCount(r.archKey('leading_dense_block_count'), 0, 0, base.nLayers, 'block_count');
    return {
      ...base,
      moe: { ...moe, gating, layerIsMoe: Array.from({ length: base.nLayers }, (_, il) => il >= lead) },
    };
  },
  tensors: { ...LLAMA_CPP_TENSOR_NAMES, outputNorm: 'token_embd_norm.weight' },
  options,
};
