/**
 * `nomic-bert-moe` (Nomic Embed v2 MoE): nomic-bert's encoder (llama.cpp `src/models/bert.cpp`, `nomic-bert-moe.cpp`)
 * — NEOX rope of q and k, token-type row 0, the post-norm LayerNorms — with bert's un-gated GELU FFN (optional
 * biases), and on every layer il with il % `moe_every_n_layers` = 1 a mixture of GELU experts instead: softmax router
 * `ffn_gate_inp`, top `expert_used_count` of `expert_count` experts (`ffn_up_exps`, `ffn_down_exps`, each of
 * `feed_forward_length`), weights the un-normalised probabilities. Run by `model/encoder.ts`. Nomic's models expect task
 * prefixes in the text (`search_query: `, `search_document: `).
 */

import { archOptions, modelMetadata, readStandardConfig } from '../config.js';
import { MODEL_LIMITS as L } from '../model-limits.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const NAME = 'nomic-bert-moe';
const options = archOptions({
  ropeKind: 'neox',
  activation: 'gelu',
  preNorms: false,
  moeRouting: { gating: 'softmax', normWeights: false, shared: 'none', expertWidthKey: 'feed_forward_length' },
});

/** nomic-bert-moe. */
export const nomicBertMoe: Architecture = {
  name: NAME,
  config(meta) {
    const base = readStandardConfig(meta, NAME, options);
    const r = modelMetadata(meta, NAME);
    const normEps = r.finite(r.archKey('attention.layer_norm_epsilon'), undefined, { min: 0 }, 'the LayerNorm epsilon');
    // llama.cpp's default 0: no MoE layer at all.
    const every = r.boundedCount(r.archKey('moe_every_n_layers'), 0, 0, L.maxLayers, 'maxLayers');
    const moe = base.moe!; // experts are required for this architecture (readStandardConfig checked them)
    return {
      ...base,
      normEps,
      moe: { ...moe, layerIsMoe: Array.from({ length: base.nLayers }, (_, il) => every > 0 && il % every === 1) },
    };
  },
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
  encoder: { ffn: 'gelu', rope: true },
};
