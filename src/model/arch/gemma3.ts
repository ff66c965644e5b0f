/**
 * `gemma3` (text): gemma2's block plus per-head q/k RMSNorm, no soft-capping (unless the file sets a final one),
 * sliding-window layers with their own rope (`rope.freq_base_swa`, default 10000, unscaled) and every 6th layer
 * global (or `attention.sliding_window_pattern`), global layers using `rope.freq_base` and the linear scaling.
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
});

/** gemma3: Gemma-3 27B (62 layers) scales attention by 1/√(n_embd/n_head) (integer division, as llama.cpp), as llama.cpp. */
export const gemma3: Architecture = {
  name: 'gemma3',
  config(meta) {
    const base = readStandardConfig(meta, 'gemma3', options);
    const r = modelMetadata(meta, 'gemma3');
    const slidingWindow = r.boundedCount(
      r.archKey('attention.sliding_window'),
      0,
      0,
      MODEL_LIMITS.maxContextLength,
      'maxContextLength',
    );
    return {
      ...base,
      slidingWindow,
      slidingLayers:
        slidingWindow > 0
          ? readSlidingLayers(meta, 'gemma3', base.nLayers, 6)
          : new Array<boolean>(base.nLayers).fill(false),
      ropeSwa: {
        theta: r.finite(
          r.archKey('rope.freq_base_swa'),
          10000,
          { min: 0, exclusiveMin: true },
          'the sliding-window rope base',
        ),
        freqScale: 1,
        withYarn: true, // llama.cpp's local layers get the context's ext_factor and attn_factor
      },
      finalSoftcap: r.finite(r.archKey('final_logit_softcapping'), 0, { min: 0 }, 'the final soft-cap'),
      attentionScale:
        base.nLayers === 62
          ? 1 / Math.sqrt(Math.floor(base.embeddingLength / base.nHeads))
          : 1 / Math.sqrt(base.headDim),
    };
  },
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
};
