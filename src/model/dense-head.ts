/**
 * The sentence-transformers dense layers some embedding models apply to the pooled vector (EmbeddingGemma:
 * `dense_2` n_embd → `dense_2_feat_out`, optional `dense_2.bias`, then `dense_3` back to n_embd; llama.cpp
 * `build_dense_out`, no activation between), read onto the host: they run once per sequence on one vector.
 */

import { LlmError } from '../errors.js';
import type { ModelConfig } from './config.js';
import type { PooledProjection } from './pooling.js';
import type { WeightLoader } from './weight-loader.js';

/** The dense head of a model whose file has `dense_2.weight` / `dense_3.weight`; null otherwise. */
export async function denseHeadOf(loader: WeightLoader, c: ModelConfig): Promise<PooledProjection | null> {
  if (!loader.has('dense_2.weight') && !loader.has('dense_3.weight')) return null;
  if (!loader.has('dense_2.weight') || !loader.has('dense_3.weight')) {
    throw new LlmError('gguf-invalid', 'loading model: dense_2.weight and dense_3.weight come together', {
      details: { tensor: loader.has('dense_2.weight') ? 'dense_3.weight' : 'dense_2.weight' },
    });
  }
  const E = c.embeddingLength;
  const mid = loader.info('dense_2.weight').shape[1] ?? 0;
  return {
    dense2: await loader.readHostF32('dense_2.weight', [E, mid]), // [mid, E]
    dense2Bias: loader.has('dense_2.bias') ? await loader.readHostF32('dense_2.bias', [mid]) : null,
    dense3: await loader.readHostF32('dense_3.weight', [mid, E]), // [E, mid]
    mid,
  };
}
