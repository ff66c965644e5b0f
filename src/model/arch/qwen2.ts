/** `qwen2` (Qwen2, Qwen2.5): llama with Q/K/V biases (loaded when present) and NEOX rope. */

import { archOptions, readStandardConfig } from '../config.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';
import { requireSquareAttention } from '../square-attention.js';

const options = archOptions({ ropeKind: 'neox' });

/** qwen2: biases `blk.{i}.attn_{q,k,v}.bias` are picked up by the loader. */
export const qwen2: Architecture = {
  name: 'qwen2',
  config: (meta) => requireSquareAttention(readStandardConfig(meta, 'qwen2', options)),
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
};
