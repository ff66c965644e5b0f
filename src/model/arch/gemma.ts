/**
 * `gemma` (Gemma 1, CodeGemma): GEGLU (tanh GELU), embeddings × √n_embd, NEOX rope, no post-norms or soft-caps;
 * the lm head is always `token_embd` (llama.cpp never reads an `output.weight` for gemma). GGUF norm weights
 * already include gemma's +1 (the converter adds it).
 */

import { archOptions, readStandardConfig } from '../config.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const options = archOptions({ ropeKind: 'neox', activation: 'gelu', scaleEmbeddings: true, alwaysTied: true });

/** gemma. */
export const gemma: Architecture = {
  name: 'gemma',
  config: (meta) => readStandardConfig(meta, 'gemma', options),
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
};
