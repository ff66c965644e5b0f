/**
 * `exaone4`: olmo2's layout with per-head q/k norms; tied output. `--shape swa=W` writes a sliding window, which
 * llama.cpp honours only for 64-layer models (then every 4th layer is global and NoPE): record that variant with
 * n_layer=64 and small widths (and post_norm_milli=250: post-norm weights around 0.25 keep 64 random layers
 * well-conditioned).
 */

import { extra, plan, SMALL_SHAPE, type SpecMetadata, u32, type SyntheticArchSpec } from '../arch-spec.js';
import { postNormBlock } from './olmo2.js';

/** exaone4. */
export const exaone4: SyntheticArchSpec = {
  name: 'exaone4',
  shape: { ...SMALL_SHAPE, nLayer: 3, tied: true },
  metadata: (s): SpecMetadata => {
    const swa = extra(s, 'swa', 0);
    return swa > 0 ? { 'exaone4.attention.sliding_window': u32(swa) } : {};
  },
  tensors: (s) => [
    plan.embedding(s),
    ...Array.from({ length: s.nLayer }, (_, il) =>
      postNormBlock(s, il, true, extra(s, 'post_norm_milli', 1000) / 1000),
    ).flat(),
    ...plan.head(s),
  ],
};
