/**
 * `gemma2`: GEGLU (tanh GELU), embeddings × √n_embd, post-attention and post-FFN norms, attention-logit and
 * final-logit soft-capping, and a sliding window on alternate layers (even layers slide, pattern period 2) whose rope
 * base is `rope.freq_base_swa` when the file has one.
 * GGUF norm weights already include gemma's +1 (the converter adds it).
 */

import { archOptions, modelMetadata, readSlidingLayers, readStandardConfig } from '../config.js';
import { MODEL_LIMITS } from '../model-limits.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const options = archOptions({ ropeKind: 'neox', activation: 'gelu', postNorms: true, scaleEmbeddings: true });

/** gemma2: Gemma-2 27B (46 layers) scales attention by 1/√(n_embd/n_head) (integer division, as llama.cpp) instead of 1/√head_dim, as llama.cpp. */
export const gemma2: Architecture = {
  name: 'gemma2',
  config(meta) {
    const base = readStandardConfig(meta, 'gemma2', options);
    const r = modelMetadata(meta, 'gemma2');
    const slidingWindow = r.boundedCount(
      r.archKey('attention.sliding_window'),
      4096,
      0,
      MODEL_LIMITS.maxContextLength,
      'maxContextLength',
    );
    return {
      ...base,
      slidingWindow,
      slidingLayers: readSlidingLayers(meta, 'gemma2', base.nLayers, 2),
      // llama.cpp: local layers use `rope.freq_base_swa` (default the global base) with the global scaling and factors.
      ropeSwa: {
        theta: r.finite(
          r.archKey('rope.freq_base_swa'),
          base.ropeTheta,
          { min: 0, exclusiveMin: true },
          'the sliding-window rope base',
        ),
        freqScale: base.ropeFreqScale,
        withYarn: true,
      },
      attnSoftcap: r.finite(r.archKey('attn_logit_softcapping'), 50, { min: 0 }, 'the attention soft-cap'),
      finalSoftcap: r.finite(r.archKey('final_logit_softcapping'), 30, { min: 0 }, 'the final soft-cap'),
      attentionScale:
        base.nLayers === 46
          ? 1 / Math.sqrt(Math.floor(base.embeddingLength / base.nHeads))
          : 1 / Math.sqrt(base.headDim),
    };
  },
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
};
