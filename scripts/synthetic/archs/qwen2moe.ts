/**
 * `qwen2moe`: qwen2's attention (Q/K/V biases) and a mixture of experts plus a shared expert gated by
 * sigmoid(x · ffn_gate_inp_shexp). Knobs: n_expert (8), n_expert_used (2), n_ff_exp (128), n_ff_shexp (192).
 */

import { extra, plan, SMALL_SHAPE, type SyntheticArchSpec, u32 } from '../arch-spec.js';
import type { ModelShape, TensorPlan } from '../arch-plan.js';
import { moeBlock, moeMetadata, moeTensors } from './qwen3moe.js';

/** Router, experts, then the shared expert and its gate. */
function ffn(s: ModelShape, il: number): TensorPlan[] {
  const b = `blk.${il}.`;
  const sh = extra(s, 'n_ff_shexp', 192);
  return [
    ...moeTensors(s, il),
    plan.bias(`${b}ffn_gate_inp_shexp.weight`, s.nEmbd, 2 / Math.sqrt(s.nEmbd)),
    plan.mat(`${b}ffn_gate_shexp.weight`, s.nEmbd, sh),
    plan.mat(`${b}ffn_up_shexp.weight`, s.nEmbd, sh),
    plan.mat(`${b}ffn_down_shexp.weight`, sh, s.nEmbd),
  ];
}

/** qwen2moe. */
export const qwen2moe: SyntheticArchSpec = {
  name: 'qwen2moe',
  shape: { ...SMALL_SHAPE, nLayer: 3, tied: false },
  metadata: (s) => ({
    ...moeMetadata('qwen2moe', s),
    'qwen2moe.expert_shared_feed_forward_length': u32(extra(s, 'n_ff_shexp', 192)),
  }),
  tensors: (s) => [
    plan.embedding(s),
    ...Array.from({ length: s.nLayer }, (_, il) => moeBlock(s, il, { qkvBias: true }, ffn)).flat(),
    ...plan.head(s),
  ],
};
