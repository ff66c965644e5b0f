/**
 * `ernie4_5-moe`: llama's attention, `n_dense_lead` (1) dense leading layers, then experts on every layer with a
 * selection bias `exp_probs_b` and an ungated shared expert. Knobs: n_expert (8), n_expert_used (2), n_ff_exp (128),
 * n_ff_shexp (192; 0 = none), n_dense_lead (1).
 */

import { extra, plan, SMALL_SHAPE, type SyntheticArchSpec, u32 } from '../arch-spec.js';
import type { ModelShape, TensorPlan } from '../arch-plan.js';
import { moeBlock, moeKnobs, moeMetadata, moeTensors } from './qwen3moe.js';

const NAME = 'ernie4_5-moe';
const lead = (s: ModelShape): number => extra(s, 'n_dense_lead', 1);
const shexp = (s: ModelShape): number => extra(s, 'n_ff_shexp', 192);

/** Router (with its selection bias), experts and the shared expert of a MoE layer. */
function ffn(s: ModelShape, il: number): TensorPlan[] {
  const b = `blk.${il}.`;
  const sh = shexp(s);
  return [
    ...moeTensors(s, il),
    plan.bias(`${b}exp_probs_b.bias`, moeKnobs(s).nExpert, 0.2),
    ...(sh > 0
      ? [
          plan.mat(`${b}ffn_gate_shexp.weight`, s.nEmbd, sh),
          plan.mat(`${b}ffn_up_shexp.weight`, s.nEmbd, sh),
          plan.mat(`${b}ffn_down_shexp.weight`, sh, s.nEmbd),
        ]
      : []),
  ];
}

/** ernie4_5-moe. */
export const ernie4_5Moe: SyntheticArchSpec = {
  name: NAME,
  shape: { ...SMALL_SHAPE, nLayer: 3, tied: true },
  metadata: (s) => ({
    ...moeMetadata(NAME, s),
    [`${NAME}.interleave_moe_layer_step`]: u32(1),
    [`${NAME}.leading_dense_block_count`]: u32(lead(s)),
    ...(shexp(s) > 0 ? { [`${NAME}.expert_shared_feed_forward_length`]: u32(shexp(s)) } : {}),
  }),
  tensors: (s) => [
    plan.embedding(s),
    ...Array.from({ length: s.nLayer }, (_, il) =>
      il < lead(s) ? plan.llamaBlock(s, il) : moeBlock(s, il, {}, ffn),
    ).flat(),
    ...plan.head(s),
  ],
};
