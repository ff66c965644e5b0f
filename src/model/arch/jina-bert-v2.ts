/**
 * `jina-bert-v2` (jina-embeddings-v2): bert's post-norm encoder (llama.cpp `src/models/bert.cpp`,
 * `jina-bert-v2.cpp`) without positions of any kind — ALiBi attention biases instead (maximum bias 8, as llama.cpp
 * hard-codes it: head h adds slope_h · −|i − j|) — token-type row 0, optional LayerNorms of q and k over all heads,
 * Q/K/V/O biases, and a GEGLU FFN: gelu(x · ffn_gateᵀ) · (x · ffn_upᵀ + up bias) → ffn_down (+ bias); a file
 * without `ffn_gate` holds the gate's rows first in an `ffn_up` of 2·n_ff rows. Run by `model/encoder.ts`.
 */

import { archOptions, modelMetadata, readStandardConfig } from '../config.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const NAME = 'jina-bert-v2';
const options = archOptions({ activation: 'gelu', preNorms: false });

/** jina-bert-v2. */
export const jinaBertV2: Architecture = {
  name: NAME,
  config(meta) {
    const base = readStandardConfig(meta, NAME, options);
    const r = modelMetadata(meta, NAME);
    const normEps = r.finite(r.archKey('attention.layer_norm_epsilon'), undefined, { min: 0 }, 'the LayerNorm epsilon');
    return { ...base, normEps, noRopeLayers: new Array<boolean>(base.nLayers).fill(true) };
  },
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
  encoder: { ffn: 'geglu', rope: false, alibiMaxBias: 8 },
};
