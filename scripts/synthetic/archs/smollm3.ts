/** `smollm3`: llama's block; every 4th layer (il+1 ≡ 0 mod 4) has no rope (NoPE), as llama.cpp's smollm3 graph. */

import { plan, SMALL_SHAPE, type SyntheticArchSpec } from '../arch-spec.js';

/** smollm3. */
export const smollm3: SyntheticArchSpec = {
  name: 'smollm3',
  shape: { ...SMALL_SHAPE, nLayer: 4, tied: true },
  metadata: () => ({}),
  tensors: (s) => [
    plan.embedding(s),
    ...Array.from({ length: s.nLayer }, (_, il) => plan.llamaBlock(s, il)).flat(),
    ...plan.head(s),
  ],
};
