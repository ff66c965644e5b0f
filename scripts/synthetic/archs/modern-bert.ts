/**
 * `modern-bert` (ModernBERT): pre-norm encoder blocks without biases — `token_embd_norm`, per layer `attn_norm`
 * (none on layer 0), fused `attn_qkv`, `attn_output`, `ffn_norm`, `ffn_up` of 2·n_ff rows (gate | up, GEGLU),
 * `ffn_down` — and a final `output_norm`; NEOX rope with its own base on the local layers (a symmetric sliding window,
 * every third layer from layer 0 global). Knob: window (8, shorter than the longer recorded inputs). Record it with
 * `--non-causal --embedding mean|cls`.
 */

import { extra, f32, plan, SMALL_SHAPE, type SpecMetadata, u32, type SyntheticArchSpec } from '../arch-spec.js';
import type { ModelShape, TensorPlan } from '../arch-plan.js';

/** One modern-bert block. */
function block(s: ModelShape, il: number): TensorPlan[] {
  const b = `blk.${il}.`;
  const qkv = (s.nHead + 2 * s.nHeadKv) * s.headDim;
  return [
    ...(il > 0 ? [plan.norm(`${b}attn_norm.weight`, s.nEmbd)] : []),
    plan.mat(`${b}attn_qkv.weight`, s.nEmbd, qkv),
    plan.mat(`${b}attn_output.weight`, s.nHead * s.headDim, s.nEmbd),
    plan.norm(`${b}ffn_norm.weight`, s.nEmbd),
    plan.mat(`${b}ffn_up.weight`, s.nEmbd, 2 * s.nFf),
    plan.mat(`${b}ffn_down.weight`, s.nFf, s.nEmbd),
  ];
}

/** modern-bert. */
export const modernBert: SyntheticArchSpec = {
  name: 'modern-bert',
  shape: { ...SMALL_SHAPE, nEmbd: 128, nHead: 4, nHeadKv: 4, headDim: 32, nFf: 256, nLayer: 4, tied: true },
  metadata: (s): SpecMetadata => ({
    'modern-bert.attention.layer_norm_rms_epsilon': null,
    'modern-bert.attention.layer_norm_epsilon': f32(1e-5),
    'modern-bert.rope.freq_base': f32(160000),
    'modern-bert.rope.freq_base_swa': f32(10000),
    'modern-bert.attention.sliding_window': u32(extra(s, 'window', 8)),
  }),
  tensors: (s) => [
    plan.embedding(s),
    plan.norm('token_embd_norm.weight', s.nEmbd),
    ...Array.from({ length: s.nLayer }, (_, il) => block(s, il)).flat(),
    plan.norm('output_norm.weight', s.nEmbd),
    // `--shape cls_head=1` (with `--embedding rank`): gte-reranker-modernbert's head before cls.output (dense, GELU,
    // a bias-free LayerNorm).
    ...(extra(s, 'cls_head', 0) > 0
      ? [plan.mat('cls.weight', s.nEmbd, s.nEmbd), plan.norm('cls.norm.weight', s.nEmbd)]
      : []),
  ],
  embeddingOnly: true,
};
