/**
 * `granite`: llama's block with Granite's multipliers (`--shape` knobs, in thousandths: embedding_scale_milli,
 * residual_scale_milli, attention_scale_milli, logit_scale_milli; defaults 12, 0.22, 1/64 and 2, near Granite 3's own
 * except a milder logit divisor so the random model's logits stay decisive); tied output like Granite 3.
 */

import { extra, f32, plan, SMALL_SHAPE, type SyntheticArchSpec } from '../arch-spec.js';

/** granite. */
export const granite: SyntheticArchSpec = {
  name: 'granite',
  shape: { ...SMALL_SHAPE, nLayer: 3, tied: true },
  metadata: (s) => ({
    'granite.embedding_scale': f32(extra(s, 'embedding_scale_milli', 12000) / 1000),
    'granite.residual_scale': f32(extra(s, 'residual_scale_milli', 220) / 1000),
    'granite.attention.scale': f32(extra(s, 'attention_scale_milli', 15.625) / 1000),
    'granite.logit_scale': f32(extra(s, 'logit_scale_milli', 2000) / 1000),
  }),
  tensors: (s) => [
    plan.embedding(s),
    ...Array.from({ length: s.nLayer }, (_, il) => plan.llamaBlock(s, il)).flat(),
    ...plan.head(s),
  ],
};
