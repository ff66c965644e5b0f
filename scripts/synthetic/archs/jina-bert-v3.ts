/**
 * `jina-bert-v3` (jina-embeddings-v3): bert's blocks (Q/K/V/O and FFN biases, un-gated GELU, post-norm LayerNorms)
 * with NEOX rope instead of position embeddings, token-type row 0. Record it with `--non-causal --embedding mean`.
 */

import { f32, plan, SMALL_SHAPE, type SpecMetadata, u32, type SyntheticArchSpec } from '../arch-spec.js';
import { bertBlock, bertLayerNorm } from './bert.js';

/** jina-bert-v3. */
export const jinaBertV3: SyntheticArchSpec = {
  name: 'jina-bert-v3',
  shape: { ...SMALL_SHAPE, nEmbd: 128, nHead: 4, nHeadKv: 4, headDim: 32, nFf: 512, nLayer: 3, tied: true },
  metadata: (): SpecMetadata => ({
    'jina-bert-v3.attention.layer_norm_rms_epsilon': null,
    'jina-bert-v3.attention.layer_norm_epsilon': f32(1e-5),
    'jina-bert-v3.rope.freq_base': f32(20000),
    'tokenizer.ggml.token_type_count': u32(1),
  }),
  tensors: (s) => [
    plan.embedding(s),
    { name: 'token_types.weight', shape: [s.nEmbd, 1], kind: 'conv', std: 0.5, center: 0 },
    ...bertLayerNorm('token_embd_norm', s.nEmbd),
    ...Array.from({ length: s.nLayer }, (_, il) => bertBlock(s, il)).flat(),
  ],
  embeddingOnly: true,
};
