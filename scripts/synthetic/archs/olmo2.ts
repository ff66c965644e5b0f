/**
 * `olmo2`: no pre-norms, post-attention and post-FFN norms, q/k norms over all heads (weights of n_head·head_dim and
 * n_head_kv·head_dim), NEOX rope; an untied output. `--shape swa=W` adds OLMo 3's sliding window (every 4th layer
 * global).
 */

import { extra, plan, SMALL_SHAPE, type SpecMetadata, u32, type SyntheticArchSpec } from '../arch-spec.js';
import type { ModelShape, TensorPlan } from '../arch-plan.js';

/**
 * A block without pre-norms: q/k norms per head (`headNorms`) or over all heads, post-attention and post-FFN norms
 * (weights around `postNormCenter`: below 1 keeps deep random models well-conditioned).
 */
export function postNormBlock(s: ModelShape, il: number, headNorms: boolean, postNormCenter = 1): TensorPlan[] {
  const b = `blk.${il}.`;
  const qDim = s.nHead * s.headDim;
  const kvDim = s.nHeadKv * s.headDim;
  return [
    plan.mat(`${b}attn_q.weight`, s.nEmbd, qDim),
    plan.mat(`${b}attn_k.weight`, s.nEmbd, kvDim),
    plan.mat(`${b}attn_v.weight`, s.nEmbd, kvDim),
    plan.mat(`${b}attn_output.weight`, qDim, s.nEmbd),
    plan.norm(`${b}attn_q_norm.weight`, headNorms ? s.headDim : qDim),
    plan.norm(`${b}attn_k_norm.weight`, headNorms ? s.headDim : kvDim),
    plan.norm(`${b}post_attention_norm.weight`, s.nEmbd, postNormCenter),
    plan.mat(`${b}ffn_gate.weight`, s.nEmbd, s.nFf),
    plan.mat(`${b}ffn_up.weight`, s.nEmbd, s.nFf),
    plan.mat(`${b}ffn_down.weight`, s.nFf, s.nEmbd),
    plan.norm(`${b}post_ffw_norm.weight`, s.nEmbd, postNormCenter),
  ];
}

/** olmo2. */
export const olmo2: SyntheticArchSpec = {
  name: 'olmo2',
  shape: { ...SMALL_SHAPE, nLayer: 3, tied: false },
  metadata: (s): SpecMetadata => {
    const swa = extra(s, 'swa', 0);
    return swa > 0 ? { 'olmo2.attention.sliding_window': u32(swa) } : {};
  },
  tensors: (s) => [
    plan.embedding(s),
    ...Array.from({ length: s.nLayer }, (_, il) => postNormBlock(s, il, false)).flat(),
    ...plan.head(s),
  ],
};
