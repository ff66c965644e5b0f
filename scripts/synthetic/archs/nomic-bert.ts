/**
 * `nomic-bert` (Nomic Embed v1.5): bert's encoder with a fused `attn_qkv` (no biases), NEOX rope instead of position
 * embeddings, a SwiGLU FFN without biases, token-type row 0 and bert's LayerNorms with bias. Record it with
 * `--non-causal --embedding mean|cls`.
 */

import { f32, plan, SMALL_SHAPE, type SpecMetadata, u32, type SyntheticArchSpec } from '../arch-spec.js';
import type { ModelShape, TensorPlan } from '../arch-plan.js';

/** A LayerNorm's weight (around 1) and bias. */
function layerNorm(name: string, n: number): TensorPlan[] {
  return [plan.norm(`${name}.weight`, n), plan.bias(`${name}.bias`, n, 0.1)];
}

/** One nomic-bert block. */
function nomicBlock(s: ModelShape, il: number): TensorPlan[] {
  const b = `blk.${il}.`;
  const qDim = s.nHead * s.headDim;
  const kvDim = s.nHeadKv * s.headDim;
  return [
    plan.mat(`${b}attn_qkv.weight`, s.nEmbd, qDim + 2 * kvDim),
    plan.mat(`${b}attn_output.weight`, qDim, s.nEmbd),
    ...layerNorm(`${b}attn_output_norm`, s.nEmbd),
    plan.mat(`${b}ffn_up.weight`, s.nEmbd, s.nFf),
    plan.mat(`${b}ffn_gate.weight`, s.nEmbd, s.nFf),
    plan.mat(`${b}ffn_down.weight`, s.nFf, s.nEmbd),
    ...layerNorm(`${b}layer_output_norm`, s.nEmbd),
  ];
}

/** nomic-bert. */
export const nomicBert: SyntheticArchSpec = {
  name: 'nomic-bert',
  shape: { ...SMALL_SHAPE, nEmbd: 128, nHead: 4, nHeadKv: 4, headDim: 32, nFf: 384, nLayer: 3, tied: true },
  metadata: (): SpecMetadata => ({
    'nomic-bert.attention.layer_norm_rms_epsilon': null,
    'nomic-bert.attention.layer_norm_epsilon': f32(1e-12),
    'nomic-bert.rope.freq_base': f32(1000),
    'tokenizer.ggml.token_type_count': u32(2),
  }),
  tensors: (s) => [
    plan.embedding(s),
    { name: 'token_types.weight', shape: [s.nEmbd, 2], kind: 'conv', std: 0.5, center: 0 },
    ...layerNorm('token_embd_norm', s.nEmbd),
    ...Array.from({ length: s.nLayer }, (_, il) => nomicBlock(s, il)).flat(),
  ],
  embeddingOnly: true,
};
