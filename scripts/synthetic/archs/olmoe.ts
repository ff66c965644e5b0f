/**
 * `olmoe`: llama's attention with full-width q/k RMSNorms ([n_embd], [n_embd_k_gqa]) and a mixture of experts each
 * `feed_forward_length` (n_ff) wide. Knobs: n_expert (8), n_expert_used (2); the expert width is n_ff.
 */

import { plan, SMALL_SHAPE, type SyntheticArchSpec, u32 } from '../arch-spec.js';
import type { ModelShape, TensorPlan } from '../arch-plan.js';
import { moeBlock, moeKnobs, moeTensors } from './qwen3moe.js';

/** Full-width q/k norms, then the router and experts (n_ff wide). */
function ffn(s: ModelShape, il: number): TensorPlan[] {
  const b = `blk.${il}.`;
  return [
    plan.norm(`${b}attn_q_norm.weight`, s.nHead * s.headDim),
    plan.norm(`${b}attn_k_norm.weight`, s.nHeadKv * s.headDim),
    ...moeTensors({ ...s, extra: { ...s.extra, n_ff_exp: s.nFf } }, il),
  ];
}

/** olmoe. */
export const olmoe: SyntheticArchSpec = {
  name: 'olmoe',
  shape: { ...SMALL_SHAPE, nFf: 128, nLayer: 3, tied: false },
  metadata: (s) => ({
    'olmoe.expert_count': u32(moeKnobs(s).nExpert),
    'olmoe.expert_used_count': u32(moeKnobs(s).nUsed),
  }),
  tensors: (s) => [
    plan.embedding(s),
    ...Array.from({ length: s.nLayer }, (_, il) => moeBlock(s, il, {}, ffn)).flat(),
    ...plan.head(s),
  ],
};
