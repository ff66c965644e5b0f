/**
 * `granitemoe`: granite's block and multipliers (knobs as granite's spec, in thousandths) with a mixture of experts each
 * `feed_forward_length` (n_ff) wide and an optional ungated shared expert. Knobs: n_expert (8), n_expert_used (2),
 * n_ff_shexp (0 = none).
 */

import { extra, f32, plan, SMALL_SHAPE, type SyntheticArchSpec, u32 } from '../arch-spec.js';
import type { ModelShape, TensorPlan } from '../arch-plan.js';
import { moeBlock, moeKnobs, moeTensors } from './qwen3moe.js';

const NAME = 'granitemoe';
const shexp = (s: ModelShape): number => extra(s, 'n_ff_shexp', 0);

/** Router and experts (n_ff wide), then the shared expert when sized. */
function ffn(s: ModelShape, il: number): TensorPlan[] {
  const b = `blk.${il}.`;
  const sh = shexp(s);
  return [
    ...moeTensors({ ...s, extra: { ...s.extra, n_ff_exp: s.nFf } }, il),
    ...(sh > 0
      ? [
          plan.mat(`${b}ffn_gate_shexp.weight`, s.nEmbd, sh),
          plan.mat(`${b}ffn_up_shexp.weight`, s.nEmbd, sh),
          plan.mat(`${b}ffn_down_shexp.weight`, sh, s.nEmbd),
        ]
      : []),
  ];
}

/** granitemoe. */
export const granitemoe: SyntheticArchSpec = {
  name: NAME,
  shape: { ...SMALL_SHAPE, nFf: 128, nLayer: 3, tied: true },
  metadata: (s) => ({
    [`${NAME}.expert_count`]: u32(moeKnobs(s).nExpert),
    [`${NAME}.expert_used_count`]: u32(moeKnobs(s).nUsed),
    ...(shexp(s) > 0 ? { [`${NAME}.expert_shared_feed_forward_length`]: u32(shexp(s)) } : {}),
    [`${NAME}.embedding_scale`]: f32(extra(s, 'embedding_scale_milli', 12000) / 1000),
    [`${NAME}.residual_scale`]: f32(extra(s, 'residual_scale_milli', 220) / 1000),
    [`${NAME}.attention.scale`]: f32(extra(s, 'attention_scale_milli', 15.625) / 1000),
    [`${NAME}.logit_scale`]: f32(extra(s, 'logit_scale_milli', 2000) / 1000),
  }),
  tensors: (s) => [
    plan.embedding(s),
    ...Array.from({ length: s.nLayer }, (_, il) => moeBlock(s, il, {}, ffn)).flat(),
    ...plan.head(s),
  ],
};
