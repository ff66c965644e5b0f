/** `qwen3`: llama with per-head RMSNorm of q and k before rope, NEOX rope, no biases; head size from key_length. */

import { readStandardConfig, type ArchOptions } from '../config.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const options: ArchOptions = {
  ropeKind: 'neox',
  activation: 'silu',
  qkNorm: true,
  postNorms: false,
  scaleEmbeddings: false,
  fusedQkv: false,
  fusedGateUp: false,
};

/** qwen3. */
export const qwen3: Architecture = {
  name: 'qwen3',
  config: (meta) => readStandardConfig(meta, 'qwen3', options),
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
};
