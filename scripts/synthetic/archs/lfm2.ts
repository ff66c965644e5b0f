/**
 * `lfm2`: short gated convolution layers (`attention.head_count_kv` 0) and GQA attention layers with q/k norms, tied
 * embeddings, the final norm named `token_embd_norm` (llama.cpp's lfm2 quirk). Knobs: `attn_period` (layer il is
 * attention when il % attn_period = attn_period − 1; default 3), `layout_1_2b` = 1 (LFM2-1.2B's layer pattern),
 * `l_cache` (conv taps; default 3, as every LFM2). Named shape 'lfm2-1.2b' for the benchmark.
 */

import { extra, plan, SMALL_SHAPE, type SyntheticArchSpec, u32, u32Array } from '../arch-spec.js';
import type { ModelShape, TensorPlan } from '../arch-plan.js';

/** LFM2-1.2B's attention layers (its `layer_types`); the other ten are short convolutions. */
const LFM2_1_2B_ATTENTION = [2, 5, 8, 10, 12, 14];

const isAttention = (s: ModelShape, il: number): boolean => {
  if (extra(s, 'layout_1_2b', 0) === 1) return LFM2_1_2B_ATTENTION.includes(il);
  const period = extra(s, 'attn_period', 3);
  return il % period === period - 1;
};

/** lfm2. */
export const lfm2: SyntheticArchSpec = {
  name: 'lfm2',
  shape: { ...SMALL_SHAPE, nLayer: 4, tied: true },
  namedShapes: {
    // LFM2-1.2B (LiquidAI/LFM2-1.2B config.json): 1.17 B parameters, tied embeddings, 65536-token vocabulary.
    'lfm2-1.2b': {
      nEmbd: 2048,
      nHead: 32,
      nHeadKv: 8,
      headDim: 64,
      nFf: 8192,
      nLayer: 16,
      nVocab: 65536,
      tied: true,
      extra: { layout_1_2b: 1, l_cache: 3 },
    },
  },
  metadata: (s) => ({
    'lfm2.attention.head_count_kv': u32Array(
      Array.from({ length: s.nLayer }, (_, il) => (isAttention(s, il) ? s.nHeadKv : 0)),
    ),
    'lfm2.shortconv.l_cache': u32(extra(s, 'l_cache', 3)),
    'lfm2.vocab_size': u32(s.nVocab),
  }),
  tensors: (s) => {
    const E = s.nEmbd;
    const taps = extra(s, 'l_cache', 3);
    const block = (il: number): TensorPlan[] => {
      const b = `blk.${il}.`;
      if (isAttention(s, il)) return plan.llamaBlock(s, il, { qkNorm: true });
      return [
        plan.norm(`${b}attn_norm.weight`, E),
        { name: `${b}shortconv.conv.weight`, shape: [taps, E], kind: 'conv', std: 1 / Math.sqrt(taps), center: 0 },
        // B, C and x multiply: a smaller scale keeps their product (and the quantization error it amplifies) near 1.
        plan.mat(`${b}shortconv.in_proj.weight`, E, 3 * E, 0.6 / Math.sqrt(E)),
        plan.mat(`${b}shortconv.out_proj.weight`, E, E),
        plan.norm(`${b}ffn_norm.weight`, E),
        plan.mat(`${b}ffn_gate.weight`, E, s.nFf),
        plan.mat(`${b}ffn_up.weight`, E, s.nFf),
        plan.mat(`${b}ffn_down.weight`, s.nFf, E),
      ];
    };
    return [
      plan.embedding(s),
      ...Array.from({ length: s.nLayer }, (_, il) => block(il)).flat(),
      ...plan.head(s).map((t) => (t.name === 'output_norm.weight' ? { ...t, name: 'token_embd_norm.weight' } : t)),
    ];
  },
};
