/**
 * `ernie4_5` (ERNIE 4.5 dense, 0.3B): llama's block with normal (adjacent-pair) rope. llama.cpp loads an
 * `attn_output.bias` when the file has one but never adds it, so it is not applied here either.
 */

import { archOptions, readStandardConfig } from '../config.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const options = archOptions({ attnOutBias: false });

/** ernie4_5. */
export const ernie4_5: Architecture = {
  name: 'ernie4_5',
  config: (meta) => readStandardConfig(meta, 'ernie4_5', options),
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
};
