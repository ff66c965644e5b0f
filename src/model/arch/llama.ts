/**
 * `llama` (Llama 1–3, TinyLlama, stories260K, SmolLM …): RMSNorm, SwiGLU, NORM rope, GQA; optional
 * `rope_freqs.weight` (llama3 rope scaling) and tied output. The baseline every other architecture varies.
 */

import { LlmError } from '../../errors.js';
import { archOptions, readStandardConfig } from '../config.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const options = archOptions();

/**
 * llama: llama.cpp ignores `llama.attention.sliding_window`, so this does too; it rotates whole heads only and refuses
 * a `rope.dimension_count` other than the head size ("invalid n_rot"), so this does too.
 */
export const llama: Architecture = {
  name: 'llama',
  config(meta) {
    const c = readStandardConfig(meta, 'llama', options);
    if (c.ropeDims !== c.headDim) {
      throw new LlmError(
        'gguf-invalid',
        `reading model config: 'llama.rope.dimension_count' = ${c.ropeDims} must equal the head size ${c.headDim} (llama rotates whole heads); the model file is broken`,
        { details: { key: 'llama.rope.dimension_count', value: c.ropeDims } },
      );
    }
    return c;
  },
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
};
