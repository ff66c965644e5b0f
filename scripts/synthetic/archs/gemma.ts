/** `gemma`: llama's block (GEGLU), always tied; default head size 256 with one KV head per 4 query heads. */

import { plan, SMALL_SHAPE, type SyntheticArchSpec } from '../arch-spec.js';

/** gemma. */
export const gemma: SyntheticArchSpec = {
  name: 'gemma',
  shape: { ...SMALL_SHAPE, nHead: 4, nHeadKv: 1, headDim: 256, nLayer: 3, tied: true },
  metadata: () => ({}),
  tensors: (s) => [
    plan.embedding(s),
    ...Array.from({ length: s.nLayer }, (_, il) => plan.llamaBlock(s, il)).flat(),
    ...plan.head(s),
  ],
};
