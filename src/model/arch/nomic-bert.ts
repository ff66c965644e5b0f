/**
 * `nomic-bert` (Nomic Embed v1 / v1.5): bert's encoder graph (llama.cpp `src/models/bert.cpp`) with NEOX rope of q
 * and k instead of position embeddings (`rope.freq_base`), a fused `attn_qkv`, SwiGLU FFN (`ffn_gate`, `ffn_up`,
 * `ffn_down`; llama.cpp applies no FFN biases there) and the token-type row 0 added to every token embedding; the
 * same post-norm LayerNorms (`token_embd_norm`, `attn_output_norm`, `layer_output_norm`). Run by `model/encoder.ts`.
 * Nomic's models expect task prefixes in the text (`search_query: `, `search_document: `).
 */

import { archOptions, modelMetadata, readStandardConfig } from '../config.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const options = archOptions({ ropeKind: 'neox', preNorms: false, fusedQkv: true });

/** nomic-bert. */
export const nomicBert: Architecture = {
  name: 'nomic-bert',
  config(meta) {
    const base = readStandardConfig(meta, 'nomic-bert', options);
    const r = modelMetadata(meta, 'nomic-bert');
    const normEps = r.finite(r.archKey('attention.layer_norm_epsilon'), undefined, { min: 0 }, 'the LayerNorm epsilon');
    return { ...base, normEps };
  },
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
  encoder: { ffn: 'swiglu', rope: true },
};
