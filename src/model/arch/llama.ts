/**
 * `llama` (Llama 1–3, TinyLlama, stories260K, SmolLM …): RMSNorm, SwiGLU, NORM rope, GQA; optional
 * `rope_freqs.weight` (llama3 rope scaling) and tied output. The baseline every other architecture varies.
 */

import { archOptions, readStandardConfig } from '../config.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const options = archOptions();

/** llama: llama.cpp ignores `llama.attention.sliding_window`, so this does too. */
export const llama: Architecture = {
  name: 'llama',
  config: (meta) => readStandardConfig(meta, 'llama', options),
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
};
