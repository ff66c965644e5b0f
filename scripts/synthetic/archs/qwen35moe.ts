/**
 * `qwen35moe`: qwen35's DeltaNet and gated-attention layers (its knobs) with a mixture of experts on every layer plus
 * a shared expert gated by sigmoid(x · ffn_gate_inp_shexp). Knobs: n_expert (8), n_expert_used (2), n_ff_exp (128),
 * n_ff_shexp (192).
 */

import { extra, plan, u32 } from '../arch-spec.js';
import { qwen35 } from './qwen35.js';
import { moeMetadata, moeTensors } from './qwen3moe.js';
import { moeVariant } from './moe-variant.js';

const NAME = 'qwen35moe';

/** qwen35moe. */
export const qwen35moe = moeVariant(qwen35, {
  name: NAME,
  shape: qwen35.shape,
  isMoe: () => true,
  ffn: (s, il) => {
    const b = `blk.${il}.`;
    const sh = extra(s, 'n_ff_shexp', 192);
    return [
      ...moeTensors(s, il),
      plan.bias(`${b}ffn_gate_inp_shexp.weight`, s.nEmbd, 2 / Math.sqrt(s.nEmbd)),
      plan.mat(`${b}ffn_gate_shexp.weight`, s.nEmbd, sh),
      plan.mat(`${b}ffn_up_shexp.weight`, s.nEmbd, sh),
      plan.mat(`${b}ffn_down_shexp.weight`, sh, s.nEmbd),
    ];
  },
  metadata: (s) => ({
    ...moeMetadata(NAME, s),
    [`${NAME}.expert_shared_feed_forward_length`]: u32(extra(s, 'n_ff_shexp', 192)),
  }),
});
