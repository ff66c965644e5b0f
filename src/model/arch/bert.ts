/**
 * `bert` (BGE, MiniLM, E5, GTE): an encoder (llama.cpp `src/models/bert.cpp`). Token + token-type row 0 + absolute
 * position embeddings, LayerNorm with bias (`token_embd_norm`); per layer q/k/v/o with biases, no rope, attention
 * over the whole sequence when `attention.causal` is false (as converted BERT files say; llama.cpp's default is
 * causal), x = LN(x + attn) (`attn_output_norm`), x = LN(x + down(gelu(up(x)))) (`layer_output_norm`); no output norm
 * and no lm head: the hidden states are pooled (`pooling_type`, cls or mean) into embeddings. Run by
 * `model/encoder.ts`; LayerNorm epsilon from `attention.layer_norm_epsilon`.
 */

import { archOptions, modelMetadata, readStandardConfig } from '../config.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const options = archOptions({ activation: 'gelu', preNorms: false });

/** bert. */
export const bert: Architecture = {
  name: 'bert',
  config(meta) {
    const base = readStandardConfig(meta, 'bert', options);
    const r = modelMetadata(meta, 'bert');
    const normEps = r.finite(r.archKey('attention.layer_norm_epsilon'), undefined, { min: 0 }, 'the LayerNorm epsilon');
    return { ...base, normEps, noRopeLayers: new Array<boolean>(base.nLayers).fill(true) };
  },
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
  encoder: { ffn: 'gelu', rope: false },
};
