/**
 * `bert` (BGE, MiniLM, E5, GTE): an encoder. Token, token-type (`token_types`, row 0 is added: llama.cpp hard-codes
 * "sentence A") and absolute position embeddings (`position_embd`, one row per trained position), LayerNorm with bias
 * of their sum (`token_embd_norm`), then per layer q/k/v/o with biases, x = LN(x + attn) (`attn_output_norm`),
 * x = LN(x + down(gelu(up(x)))) (`layer_output_norm`, FFN biases); no output norm, no lm head. Record it with
 * `--non-causal --embedding cls|mean` (llama.cpp reads `attention.causal`, default true, from the file).
 */

import { extra, f32, plan, SMALL_SHAPE, type SpecMetadata, u32, type SyntheticArchSpec } from '../arch-spec.js';
import type { ModelShape, TensorPlan } from '../arch-plan.js';

/** Trained positions (`context_length`: rows of `position_embd`). */
const BERT_POSITIONS = 512;

/** A LayerNorm's weight (around 1) and bias. */
export function bertLayerNorm(name: string, n: number): TensorPlan[] {
  return [plan.norm(`${name}.weight`, n), plan.bias(`${name}.bias`, n, 0.1)];
}

/** One BERT block: q/k/v/o with biases, the post-attention LayerNorm, a GELU FFN with biases, the output LayerNorm. */
export function bertBlock(s: ModelShape, il: number): TensorPlan[] {
  const b = `blk.${il}.`;
  const qDim = s.nHead * s.headDim;
  const kvDim = s.nHeadKv * s.headDim;
  // `--shape qkv=1`: one fused `attn_qkv` (q | k | v rows) with its fused bias, as jina-embeddings-v3 files carry.
  const qkv =
    extra(s, 'qkv', 0) > 0
      ? [plan.mat(`${b}attn_qkv.weight`, s.nEmbd, qDim + 2 * kvDim), plan.bias(`${b}attn_qkv.bias`, qDim + 2 * kvDim)]
      : [
          plan.mat(`${b}attn_q.weight`, s.nEmbd, qDim),
          plan.bias(`${b}attn_q.bias`, qDim),
          plan.mat(`${b}attn_k.weight`, s.nEmbd, kvDim),
          plan.bias(`${b}attn_k.bias`, kvDim),
          plan.mat(`${b}attn_v.weight`, s.nEmbd, kvDim),
          plan.bias(`${b}attn_v.bias`, kvDim),
        ];
  return [
    ...qkv,
    plan.mat(`${b}attn_output.weight`, qDim, s.nEmbd),
    plan.bias(`${b}attn_output.bias`, s.nEmbd, 0.1),
    ...bertLayerNorm(`${b}attn_output_norm`, s.nEmbd),
    plan.mat(`${b}ffn_up.weight`, s.nEmbd, s.nFf),
    plan.bias(`${b}ffn_up.bias`, s.nFf),
    plan.mat(`${b}ffn_down.weight`, s.nFf, s.nEmbd),
    plan.bias(`${b}ffn_down.bias`, s.nEmbd, 0.1),
    ...bertLayerNorm(`${b}layer_output_norm`, s.nEmbd),
  ];
}

/** bert. */
export const bert: SyntheticArchSpec = {
  name: 'bert',
  shape: { ...SMALL_SHAPE, nEmbd: 128, nHead: 4, nHeadKv: 4, headDim: 32, nFf: 512, nLayer: 3, tied: true },
  metadata: (): SpecMetadata => ({
    'bert.context_length': u32(BERT_POSITIONS),
    'bert.attention.layer_norm_rms_epsilon': null,
    'bert.attention.layer_norm_epsilon': f32(1e-12),
    'bert.rope.dimension_count': null,
    'bert.rope.freq_base': null,
    'tokenizer.ggml.token_type_count': u32(2),
  }),
  tensors: (s) => [
    plan.embedding(s),
    // Kept F32 ('conv' kind) in every quant, as llama.cpp's quantizer keeps token_types and position_embd.
    // `--shape no_types=1`: no token_types tensor (llama.cpp loads it as optional).
    ...(extra(s, 'no_types', 0) > 0
      ? []
      : [{ name: 'token_types.weight', shape: [s.nEmbd, 2], kind: 'conv', std: 0.5, center: 0 } as TensorPlan]),
    { name: 'position_embd.weight', shape: [s.nEmbd, BERT_POSITIONS], kind: 'conv', std: 0.5, center: 0 },
    ...bertLayerNorm('token_embd_norm', s.nEmbd),
    ...Array.from({ length: s.nLayer }, (_, il) => bertBlock(s, il)).flat(),
    // `--shape cls_head=1` (with `--embedding rank`): bge-reranker's dense head before cls.output (its weight is
    // added by the generator for rank pooling).
    ...(extra(s, 'cls_head', 0) > 0
      ? [
          plan.mat('cls.weight', s.nEmbd, s.nEmbd),
          plan.bias('cls.bias', s.nEmbd, 0.1),
          plan.bias('cls.output.bias', 2, 0.1),
        ]
      : []),
  ],
  embeddingOnly: true,
};
