/**
 * `lfm2moe`: lfm2's short-convolution and attention layers (its knobs: `attn_period`, `l_cache`) with, after
 * `n_dense_lead` (1) dense layers, a mixture of experts on every layer — router, expert stacks and the selection bias
 * `exp_probs_b` llama.cpp requires; `gating` (expert_gating_func: 1 softmax, 2 sigmoid; default 2 as LFM2-8B-A1B).
 * Knobs: n_expert (8), n_expert_used (2), n_ff_exp (128).
 */

import { extra, plan, u32 } from '../arch-spec.js';
import { lfm2 } from './lfm2.js';
import { moeKnobs, moeMetadata, moeTensors } from './qwen3moe.js';
import { moeVariant } from './moe-variant.js';

const NAME = 'lfm2moe';

/** lfm2moe. */
export const lfm2moe = moeVariant(lfm2, {
  name: NAME,
  shape: { ...lfm2.shape, nLayer: 4 },
  isMoe: (s, il) => il >= extra(s, 'n_dense_lead', 1),
  ffn: (s, il) => [...moeTensors(s, il), plan.bias(`blk.${il}.exp_probs_b.bias`, moeKnobs(s).nExpert, 0.2)],
  metadata: (s) => ({
    ...moeMetadata(NAME, s),
    [`${NAME}.expert_gating_func`]: u32(extra(s, 'gating', 2)),
    [`${NAME}.leading_dense_block_count`]: u32(extra(s, 'n_dense_lead', 1)),
    [`${NAME}.attention.sliding_window`]: null,
  }),
});
