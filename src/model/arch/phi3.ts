/**
 * `phi3` (Phi-3, Phi-3.5, Phi-4-mini): fused `attn_qkv` (rows Q, then K, then V) and fused `ffn_up` (gate rows, then
 * up rows), both split at load time; NEOX rope. llama.cpp currently disables Phi's sliding window, so it is ignored.
 */

import { archOptions, readStandardConfig } from '../config.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';
import { requireSquareAttention } from '../square-attention.js';

const options = archOptions({ ropeKind: 'neox', fusedQkv: true, fusedGateUp: true });

/** phi3. */
export const phi3: Architecture = {
  name: 'phi3',
  config: (meta) => requireSquareAttention(readStandardConfig(meta, 'phi3', options)),
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
};
