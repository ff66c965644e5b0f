/** `qwen3`: llama with per-head RMSNorm of q and k before rope, NEOX rope, no biases; head size from key_length. */

import { archOptions, readStandardConfig } from '../config.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const options = archOptions({ ropeKind: 'neox', qkNorm: true });

/** qwen3. */
export const qwen3: Architecture = {
  name: 'qwen3',
  config: (meta) => readStandardConfig(meta, 'qwen3', options),
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
};
