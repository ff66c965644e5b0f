/**
 * `gpt-oss`: llama's attention with q/k/v/o biases and per-head sink logits `attn_sinks`, YaRN NEOX rope, sliding
 * windows on even layers, then `post_attention_norm` (llama.cpp's name for its pre-FFN norm) and a mixture of experts
 * with a biased router and biased expert stacks (F32 biases [rows, n_expert]). Knobs: n_expert (5), n_expert_used (2),
 * n_ff_exp (96: not a multiple of 256, so k-quant experts fall back), window (5: shorter than the prompt).
 */

import { extra, f32, plan, SMALL_SHAPE, str, type SyntheticArchSpec, u32 } from '../arch-spec.js';
import type { ModelShape, TensorPlan } from '../arch-plan.js';

const NAME = 'gpt-oss';

function knobs(s: ModelShape): { nExpert: number; nUsed: number; nFfExp: number; window: number } {
  return {
    nExpert: extra(s, 'n_expert', 5),
    nUsed: extra(s, 'n_expert_used', 2),
    nFfExp: extra(s, 'n_ff_exp', 96),
    window: extra(s, 'window', 5),
  };
}

/** A per-expert bias [rows, n_expert]: F32 like every bias (`tensorType`). */
function expertBias(name: string, rows: number, nExpert: number): TensorPlan {
  return { name, shape: [rows, nExpert], kind: 'bias', std: 0.3, center: 0 };
}

function block(s: ModelShape, il: number): TensorPlan[] {
  const b = `blk.${il}.`;
  const { nExpert, nFfExp } = knobs(s);
  const qDim = s.nHead * s.headDim;
  const kvDim = s.nHeadKv * s.headDim;
  return [
    plan.norm(`${b}attn_norm.weight`, s.nEmbd),
    plan.mat(`${b}attn_q.weight`, s.nEmbd, qDim),
    plan.bias(`${b}attn_q.bias`, qDim),
    plan.mat(`${b}attn_k.weight`, s.nEmbd, kvDim),
    plan.bias(`${b}attn_k.bias`, kvDim),
    plan.mat(`${b}attn_v.weight`, s.nEmbd, kvDim),
    plan.bias(`${b}attn_v.bias`, kvDim),
    plan.mat(`${b}attn_output.weight`, qDim, s.nEmbd),
    plan.bias(`${b}attn_output.bias`, s.nEmbd),
    plan.bias(`${b}attn_sinks.weight`, s.nHead, 1),
    plan.norm(`${b}post_attention_norm.weight`, s.nEmbd),
    plan.router(`${b}ffn_gate_inp.weight`, s.nEmbd, nExpert),
    plan.bias(`${b}ffn_gate_inp.bias`, nExpert, 0.5),
    plan.stack(`${b}ffn_gate_exps.weight`, s.nEmbd, nFfExp, nExpert),
    expertBias(`${b}ffn_gate_exps.bias`, nFfExp, nExpert),
    plan.stack(`${b}ffn_up_exps.weight`, s.nEmbd, nFfExp, nExpert),
    expertBias(`${b}ffn_up_exps.bias`, nFfExp, nExpert),
    plan.stack(`${b}ffn_down_exps.weight`, nFfExp, s.nEmbd, nExpert),
    expertBias(`${b}ffn_down_exps.bias`, s.nEmbd, nExpert),
  ];
}

/** gpt-oss. */
export const gptOss: SyntheticArchSpec = {
  name: NAME,
  shape: { ...SMALL_SHAPE, nLayer: 4, tied: false },
  metadata: (s) => {
    const { nExpert, nUsed, nFfExp, window } = knobs(s);
    return {
      [`${NAME}.expert_count`]: u32(nExpert),
      [`${NAME}.expert_used_count`]: u32(nUsed),
      [`${NAME}.expert_feed_forward_length`]: u32(nFfExp),
      [`${NAME}.attention.sliding_window`]: u32(window),
      [`${NAME}.rope.freq_base`]: f32(150000),
      [`${NAME}.rope.scaling.type`]: str('yarn'),
      [`${NAME}.rope.scaling.factor`]: f32(32),
      [`${NAME}.rope.scaling.original_context_length`]: u32(4096),
    };
  },
  tensors: (s) => [
    plan.embedding(s),
    ...Array.from({ length: s.nLayer }, (_, il) => block(s, il)).flat(),
    ...plan.head(s),
  ],
};
