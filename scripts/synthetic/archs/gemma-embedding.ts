/**
 * `gemma-embedding` (EmbeddingGemma): gemma3's blocks (q/k norms, post-norms, GEGLU, embeddings × √n_embd, 5:1
 * sliding layers with their own rope base) run bidirectionally, then the output norm; the pooled vector goes through
 * the sentence-transformers dense layers `dense_2` (n_embd → `dense_2_feat_out`) and `dense_3` (back to n_embd).
 * `--shape swa=W` sets the (symmetric) sliding window, default 128: wider than the default inputs; `swa=16` makes it
 * mask the longer ones. Record it with `--embedding mean`.
 */

import { extra, plan, SMALL_SHAPE, type SpecMetadata, u32, f32, type SyntheticArchSpec } from '../arch-spec.js';
import type { ModelShape, TensorPlan } from '../arch-plan.js';

/** One gemma3-style block. */
function block(s: ModelShape, il: number): TensorPlan[] {
  const b = `blk.${il}.`;
  const qDim = s.nHead * s.headDim;
  const kvDim = s.nHeadKv * s.headDim;
  return [
    plan.norm(`${b}attn_norm.weight`, s.nEmbd),
    plan.mat(`${b}attn_q.weight`, s.nEmbd, qDim),
    plan.mat(`${b}attn_k.weight`, s.nEmbd, kvDim),
    plan.mat(`${b}attn_v.weight`, s.nEmbd, kvDim),
    plan.norm(`${b}attn_q_norm.weight`, s.headDim),
    plan.norm(`${b}attn_k_norm.weight`, s.headDim),
    plan.mat(`${b}attn_output.weight`, qDim, s.nEmbd),
    plan.norm(`${b}post_attention_norm.weight`, s.nEmbd, 4.5),
    plan.norm(`${b}ffn_norm.weight`, s.nEmbd),
    plan.mat(`${b}ffn_gate.weight`, s.nEmbd, s.nFf),
    plan.mat(`${b}ffn_up.weight`, s.nEmbd, s.nFf),
    plan.mat(`${b}ffn_down.weight`, s.nFf, s.nEmbd),
    plan.norm(`${b}post_ffw_norm.weight`, s.nEmbd, 4.5),
  ];
}

/** gemma-embedding. */
export const gemmaEmbedding: SyntheticArchSpec = {
  name: 'gemma-embedding',
  shape: { ...SMALL_SHAPE, nEmbd: 128, nHead: 4, nHeadKv: 1, headDim: 64, nFf: 384, nLayer: 6, tied: true },
  metadata: (s): SpecMetadata => {
    const dense = extra(s, 'dense', 256);
    return {
      'gemma-embedding.attention.sliding_window': u32(extra(s, 'swa', 128)),
      'gemma-embedding.rope.freq_base': f32(1000000),
      'gemma-embedding.rope.freq_base_swa': f32(10000),
      'gemma-embedding.attention.layer_norm_rms_epsilon': f32(1e-6),
      'gemma-embedding.dense_2_feat_in': u32(s.nEmbd),
      'gemma-embedding.dense_2_feat_out': u32(dense),
      'gemma-embedding.dense_3_feat_in': u32(dense),
      'gemma-embedding.dense_3_feat_out': u32(s.nEmbd),
    };
  },
  tensors: (s) => {
    const dense = extra(s, 'dense', 256);
    return [
      { ...plan.embedding(s), std: 0.06 },
      ...Array.from({ length: s.nLayer }, (_, il) => block(s, il)).flat(),
      plan.norm('output_norm.weight', s.nEmbd),
      plan.mat('dense_2.weight', s.nEmbd, dense),
      plan.mat('dense_3.weight', dense, s.nEmbd),
    ];
  },
  embeddingOnly: true,
};
