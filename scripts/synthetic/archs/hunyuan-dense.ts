/**
 * `hunyuan-dense`: llama's block with per-head q/k norms (applied after rope; llama.cpp refuses an
 * `attn_output.bias` for this arch), tied output and NTK `rope.scaling.alpha` (`--shape rope_alpha=A`, default
 * 1000 as Hunyuan's own).
 */

import { extra, f32, plan, SMALL_SHAPE, type SyntheticArchSpec } from '../arch-spec.js';

/** hunyuan-dense. */
export const hunyuanDense: SyntheticArchSpec = {
  name: 'hunyuan-dense',
  shape: { ...SMALL_SHAPE, nLayer: 3, tied: true },
  metadata: (s) => ({ 'hunyuan-dense.rope.scaling.alpha': f32(extra(s, 'rope_alpha', 1000)) }),
  tensors: (s) => [
    plan.embedding(s),
    ...Array.from({ length: s.nLayer }, (_, il) => plan.llamaBlock(s, il, { qkNorm: true })).flat(),
    ...plan.head(s),
  ],
};
