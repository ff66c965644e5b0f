/**
 * `jina-bert-v2` (jina-embeddings-v2): bert's blocks without position embeddings (ALiBi instead), q/k LayerNorms over
 * all heads, Q/K/V/O biases, a GEGLU FFN with a separate `ffn_gate` (no bias) beside `ffn_up` (+ bias) and `ffn_down`
 * (+ bias), token-type row 0 and bert's LayerNorms with bias. Record it with `--non-causal --embedding mean|cls`.
 */

import { extra, f32, plan, SMALL_SHAPE, type SpecMetadata, u32, type SyntheticArchSpec } from '../arch-spec.js';
import type { ModelShape, TensorPlan } from '../arch-plan.js';
import { bertLayerNorm } from './bert.js';

/** One jina-bert-v2 block. */
function block(s: ModelShape, il: number): TensorPlan[] {
  const b = `blk.${il}.`;
  const qDim = s.nHead * s.headDim;
  const kvDim = s.nHeadKv * s.headDim;
  return [
    plan.mat(`${b}attn_q.weight`, s.nEmbd, qDim),
    plan.bias(`${b}attn_q.bias`, qDim),
    ...bertLayerNorm(`${b}attn_q_norm`, qDim),
    plan.mat(`${b}attn_k.weight`, s.nEmbd, kvDim),
    plan.bias(`${b}attn_k.bias`, kvDim),
    ...bertLayerNorm(`${b}attn_k_norm`, kvDim),
    plan.mat(`${b}attn_v.weight`, s.nEmbd, kvDim),
    plan.bias(`${b}attn_v.bias`, kvDim),
    plan.mat(`${b}attn_output.weight`, qDim, s.nEmbd),
    plan.bias(`${b}attn_output.bias`, s.nEmbd, 0.1),
    ...bertLayerNorm(`${b}attn_output_norm`, s.nEmbd),
    // `--shape norm2=1`: jina-embeddings-v2-base-code's second post-attention LayerNorm (`layer_norm_1`).
    ...(extra(s, 'norm2', 0) > 0 ? bertLayerNorm(`${b}attn_norm_2`, s.nEmbd) : []),
    plan.mat(`${b}ffn_gate.weight`, s.nEmbd, s.nFf),
    plan.mat(`${b}ffn_up.weight`, s.nEmbd, s.nFf),
    plan.bias(`${b}ffn_up.bias`, s.nFf),
    plan.mat(`${b}ffn_down.weight`, s.nFf, s.nEmbd),
    plan.bias(`${b}ffn_down.bias`, s.nEmbd, 0.1),
    ...bertLayerNorm(`${b}layer_output_norm`, s.nEmbd),
  ];
}

/** jina-bert-v2. */
export const jinaBertV2: SyntheticArchSpec = {
  name: 'jina-bert-v2',
  shape: { ...SMALL_SHAPE, nEmbd: 128, nHead: 4, nHeadKv: 4, headDim: 32, nFf: 256, nLayer: 3, tied: true },
  metadata: (): SpecMetadata => ({
    'jina-bert-v2.attention.layer_norm_rms_epsilon': null,
    'jina-bert-v2.attention.layer_norm_epsilon': f32(1e-12),
    'jina-bert-v2.rope.dimension_count': null,
    'jina-bert-v2.rope.freq_base': null,
    'tokenizer.ggml.token_type_count': u32(2),
  }),
  tensors: (s) => [
    plan.embedding(s),
    { name: 'token_types.weight', shape: [s.nEmbd, 2], kind: 'conv', std: 0.5, center: 0 },
    ...bertLayerNorm('token_embd_norm', s.nEmbd),
    ...Array.from({ length: s.nLayer }, (_, il) => block(s, il)).flat(),
    // `--shape cls_head=1,cls_out=0` (with `--embedding rank`): jina-reranker-v1's one-output `cls` head.
    ...(extra(s, 'cls_head', 0) > 0 ? [plan.mat('cls.weight', s.nEmbd, 1), plan.bias('cls.bias', 1, 0.1)] : []),
  ],
  embeddingOnly: true,
};
