/** `qwen2` (Qwen2, Qwen2.5): llama with Q/K/V biases (loaded when present) and NEOX rope. */

import { readStandardConfig, type ArchOptions } from '../config.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const options: ArchOptions = {
  ropeKind: 'neox',
  activation: 'silu',
  qkNorm: false,
  postNorms: false,
  scaleEmbeddings: false,
  fusedQkv: false,
  fusedGateUp: false,
};

/** qwen2: biases `blk.{i}.attn_{q,k,v}.bias` are picked up by the loader. */
export const qwen2: Architecture = {
  name: 'qwen2',
  config: (meta) => readStandardConfig(meta, 'qwen2', options),
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
};
