/**
 * `gemma-embedding` (EmbeddingGemma-300M): gemma3's text stack (q/k norms, post-norms, GEGLU, embeddings × √n_embd,
 * sliding layers — default every 6th global — with their own rope base `rope.freq_base_swa`) with bidirectional
 * attention (llama.cpp sets it whatever the file says) and attention scale 1/√head_dim; the output norm's hidden
 * states are pooled, then the sentence-transformers dense layers `dense_2`/`dense_3` (`model/dense-head.ts`) follow.
 * llama.cpp's sliding window is symmetric here (±window/2 around each token: `symmetricWindow`).
 */

import { archOptions, modelMetadata, readSlidingLayers, readStandardConfig } from '../config.js';
import { MODEL_LIMITS } from '../model-limits.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const options = archOptions({
  ropeKind: 'neox',
  activation: 'gelu',
  qkNorm: true,
  postNorms: true,
  scaleEmbeddings: true,
  symmetricWindow: true,
});

/** gemma-embedding. */
export const gemmaEmbedding: Architecture = {
  name: 'gemma-embedding',
  config(meta) {
    const base = readStandardConfig(meta, 'gemma-embedding', options);
    const r = modelMetadata(meta, 'gemma-embedding');
    const slidingWindow = r.boundedCount(
      r.archKey('attention.sliding_window'),
      undefined,
      1,
      MODEL_LIMITS.maxContextLength,
      'maxContextLength',
    );
    return {
      ...base,
      slidingWindow,
      slidingLayers: readSlidingLayers(meta, 'gemma-embedding', base.nLayers, 6),
      ropeSwa: {
        theta: r.finite(
          r.archKey('rope.freq_base_swa'),
          10000,
          { min: 0, exclusiveMin: true },
          'the sliding-window rope base',
        ),
        freqScale: 1,
        withYarn: true, // llama.cpp passes the context's ext_factor and attn_factor to the local layers too
      },
      attentionScale: 1 / Math.sqrt(base.headDim),
      causalAttention: false,
    };
  },
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
};
