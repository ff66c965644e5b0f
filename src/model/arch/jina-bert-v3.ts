/**
 * `jina-bert-v3` (jina-embeddings-v3, an XLM-RoBERTa with rope): bert's encoder graph (llama.cpp
 * `src/models/bert.cpp`) with NEOX rope of q and k instead of position embeddings, bert's un-gated GELU FFN with
 * biases, Q/K/V/O biases, token-type row 0 and the post-norm LayerNorms with bias. Run by `model/encoder.ts`. The
 * model's task LoRA adapters are not applied (llama.cpp loads them separately too); the base weights are the
 * model's retrieval behaviour without an adapter.
 */

import { archOptions, modelMetadata, readStandardConfig } from '../config.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const options = archOptions({ ropeKind: 'neox', activation: 'gelu', preNorms: false });

/** jina-bert-v3. */
export const jinaBertV3: Architecture = {
  name: 'jina-bert-v3',
  config(meta) {
    const base = readStandardConfig(meta, 'jina-bert-v3', options);
    const r = modelMetadata(meta, 'jina-bert-v3');
    const normEps = r.finite(r.archKey('attention.layer_norm_epsilon'), undefined, { min: 0 }, 'the LayerNorm epsilon');
    return { ...base, normEps };
  },
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
  encoder: { ffn: 'gelu', rope: true },
};
