/**
 * `nomic-bert-moe` (Nomic Embed v2 MoE): nomic-bert's attention (fused `attn_qkv`, NEOX rope, token-type row 0,
 * LayerNorms with bias) with bert's GELU FFN (biases) on the dense layers and, on every layer il with
 * il % `moe_every_n_layers` (2) = 1, GELU experts instead: router `ffn_gate_inp`, `ffn_up_exps`, `ffn_down_exps`
 * [cols, rows, n_expert] of `feed_forward_length`. Knobs: n_expert (8), n_expert_used (2). Record it with
 * `--non-causal --embedding mean|cls`.
 */

import { extra, f32, plan, SMALL_SHAPE, type SpecMetadata, u32, type SyntheticArchSpec } from '../arch-spec.js';
import type { ModelShape, TensorPlan } from '../arch-plan.js';
import { bertLayerNorm } from './bert.js';

/** MoE layers are those with il % MOE_EVERY = 1 (llama.cpp's `moe_every_n_layers`). */
const MOE_EVERY = 2;

/** One nomic-bert-moe block: fused qkv, output (+ bias), LayerNorms, and a dense GELU FFN or the experts. */
function block(s: ModelShape, il: number): TensorPlan[] {
  const b = `blk.${il}.`;
  const qkv = (s.nHead + 2 * s.nHeadKv) * s.headDim;
  const nExpert = extra(s, 'n_expert', 8);
  const ffn =
    il % MOE_EVERY === 1
      ? [
          plan.router(`${b}ffn_gate_inp.weight`, s.nEmbd, nExpert),
          plan.stack(`${b}ffn_up_exps.weight`, s.nEmbd, s.nFf, nExpert),
          plan.stack(`${b}ffn_down_exps.weight`, s.nFf, s.nEmbd, nExpert),
        ]
      : [
          plan.mat(`${b}ffn_up.weight`, s.nEmbd, s.nFf),
          plan.bias(`${b}ffn_up.bias`, s.nFf),
          plan.mat(`${b}ffn_down.weight`, s.nFf, s.nEmbd),
          plan.bias(`${b}ffn_down.bias`, s.nEmbd, 0.1),
        ];
  return [
    plan.mat(`${b}attn_qkv.weight`, s.nEmbd, qkv),
    plan.mat(`${b}attn_output.weight`, s.nHead * s.headDim, s.nEmbd),
    plan.bias(`${b}attn_output.bias`, s.nEmbd, 0.1),
    ...bertLayerNorm(`${b}attn_output_norm`, s.nEmbd),
    ...ffn,
    ...bertLayerNorm(`${b}layer_output_norm`, s.nEmbd),
  ];
}

/** nomic-bert-moe. */
export const nomicBertMoe: SyntheticArchSpec = {
  name: 'nomic-bert-moe',
  shape: { ...SMALL_SHAPE, nEmbd: 128, nHead: 4, nHeadKv: 4, headDim: 32, nFf: 256, nLayer: 4, tied: true },
  metadata: (s): SpecMetadata => ({
    'nomic-bert-moe.attention.layer_norm_rms_epsilon': null,
    'nomic-bert-moe.attention.layer_norm_epsilon': f32(1e-12),
    'nomic-bert-moe.rope.freq_base': f32(1000),
    'nomic-bert-moe.moe_every_n_layers': u32(MOE_EVERY),
    'nomic-bert-moe.expert_count': u32(extra(s, 'n_expert', 8)),
    'nomic-bert-moe.expert_used_count': u32(extra(s, 'n_expert_used', 2)),
    'tokenizer.ggml.token_type_count': u32(2),
  }),
  tensors: (s) => [
    plan.embedding(s),
    { name: 'token_types.weight', shape: [s.nEmbd, 2], kind: 'conv', std: 0.5, center: 0 },
    ...bertLayerNorm('token_embd_norm', s.nEmbd),
    ...Array.from({ length: s.nLayer }, (_, il) => block(s, il)).flat(),
  ],
  embeddingOnly: true,
};
