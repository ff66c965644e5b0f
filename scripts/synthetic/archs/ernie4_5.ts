/**
 * `ernie4_5`: llama's block, tied output; every layer also carries an `attn_output.bias`, which llama.cpp loads but
 * never adds (a runtime that applied it would fail the reference).
 */

import { plan, SMALL_SHAPE, type SyntheticArchSpec } from '../arch-spec.js';

/** ernie4_5. */
export const ernie4_5: SyntheticArchSpec = {
  name: 'ernie4_5',
  shape: { ...SMALL_SHAPE, nLayer: 3, tied: true },
  metadata: () => ({}),
  tensors: (s) => [
    plan.embedding(s),
    ...Array.from({ length: s.nLayer }, (_, il) => [
      ...plan.llamaBlock(s, il),
      plan.bias(`blk.${il}.attn_output.bias`, s.nEmbd),
    ]).flat(),
    ...plan.head(s),
  ],
};
