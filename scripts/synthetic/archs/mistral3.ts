/**
 * `mistral3`: llama's block with Ministral 3's YaRN rope scaling and attention temperature. The original context
 * (`--shape orig_ctx=N`, default 8) is shorter than the prompt so that the temperature (`temp_scale_milli`, default
 * 100 = Ministral's 0.1) changes q within the reference run; YaRN factor `yarn_factor` (default 4), log multiplier 1.
 */

import { extra, f32, plan, SMALL_SHAPE, str, type SyntheticArchSpec, u32 } from '../arch-spec.js';

/** mistral3. */
export const mistral3: SyntheticArchSpec = {
  name: 'mistral3',
  shape: { ...SMALL_SHAPE, nLayer: 3, tied: false },
  metadata: (s) => ({
    'mistral3.rope.scaling.type': str('yarn'),
    'mistral3.rope.scaling.factor': f32(extra(s, 'yarn_factor', 4)),
    'mistral3.rope.scaling.original_context_length': u32(extra(s, 'orig_ctx', 8)),
    'mistral3.rope.scaling.yarn_beta_fast': f32(32),
    'mistral3.rope.scaling.yarn_beta_slow': f32(1),
    'mistral3.rope.scaling.yarn_log_multiplier': f32(1),
    'mistral3.attention.temperature_scale': f32(extra(s, 'temp_scale_milli', 100) / 1000),
  }),
  tensors: (s) => [
    plan.embedding(s),
    ...Array.from({ length: s.nLayer }, (_, il) => plan.llamaBlock(s, il)).flat(),
    ...plan.head(s),
  ],
};
