/**
 * `gemma3n` (text; Gemma 3n E2B / E4B): gemma3's attention block (per-head q/k norms, weightless per-head V norm,
 * attention scale 1, post-norms, GEGLU, √n_embd embedding scale, sliding layers with `rope.freq_base_swa`) around
 * AltUp (several residual streams, predicted and corrected per layer through a tanh router), LAuReL (a low-rank
 * residual beside attention), per-layer token embeddings added to the non-active streams, gaussian top-k activation
 * sparsity on the first 10 layers' FFN gates, layers from 20 on reading layer 18's (sliding) or 19's (global) KV, and
 * the final-logit soft-cap 30. As llama.cpp, the KV split, sparsity schedule and soft-cap are fixed, not read.
 */

import { LlmError } from '../../errors.js';
import { KV_LAYERS_FROM_START, SPARSE_LAYERS, SPARSITY_STD_MUL } from '../altup-config.js';
import { archOptions, modelMetadata, readSlidingLayers, readStandardConfig } from '../config.js';
import { MODEL_LIMITS } from '../model-limits.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const options = archOptions({
  ropeKind: 'neox',
  activation: 'gelu',
  qkNorm: true,
  postNorms: true,
  scaleEmbeddings: true,
  valueNorm: true,
});

/** Most AltUp streams accepted (real models have 4). */
const MAX_ALTUP_INPUTS = 16;

/** gemma3n. */
export const gemma3n: Architecture = {
  name: 'gemma3n',
  config(meta) {
    const base = readStandardConfig(meta, 'gemma3n', options);
    const r = modelMetadata(meta, 'gemma3n');
    const L = MODEL_LIMITS;
    const nLayers = base.nLayers;
    const slidingWindow = r.boundedCount(
      r.archKey('attention.sliding_window'),
      undefined,
      0,
      L.maxContextLength,
      'maxContextLength',
    );
    const slidingLayers = readSlidingLayers(meta, 'gemma3n', nLayers, 5);
    const nInputs = r.boundedCount(r.archKey('altup.num_inputs'), 4, 2, MAX_ALTUP_INPUTS, 'altup streams');
    const activeIdx = r.boundedCount(r.archKey('altup.active_idx'), 0, 0, nInputs - 1, 'altup.num_inputs − 1');
    const sparsityKey = r.archKey('activation_sparsity_scale');
    if (r.has(sparsityKey)) r.numberArray(sparsityKey, nLayers); // one entry per layer (llama.cpp reads none)
    const perLayerEmbd = r.boundedCount(
      r.archKey('embedding_length_per_layer_input'),
      256,
      1,
      L.maxEmbedding,
      'maxEmbedding',
    );
    const kvFromStart = Math.min(KV_LAYERS_FROM_START, nLayers);
    const kvSources = Array.from({ length: nLayers }, (_, il) =>
      il < kvFromStart ? il : kvFromStart - (slidingLayers[il] ? 2 : 1),
    );
    const patternKey = r.archKey('attention.sliding_window_pattern');
    for (let il = kvFromStart; il < nLayers; il++) {
      const src = kvSources[il];
      if (slidingLayers[src] !== slidingLayers[il] || base.layerKvHeads[src] !== base.layerKvHeads[il]) {
        throw new LlmError(
          'gguf-invalid',
          `reading model config: layer ${il} reads layer ${src}'s KV (gemma3n shares the first ${kvFromStart} ` +
            `layers' KV), whose geometry differs (sliding ${slidingLayers[src]} vs ${slidingLayers[il]}, '${patternKey}')`,
          { details: { key: patternKey, layer: il, source: src } },
        );
      }
    }
    return {
      ...base,
      slidingWindow,
      slidingLayers: slidingWindow > 0 ? slidingLayers : new Array<boolean>(nLayers).fill(false),
      ropeSwa: {
        theta: r.finite(
          r.archKey('rope.freq_base_swa'),
          10000,
          { min: 0, exclusiveMin: true },
          'the sliding-window rope base',
        ),
        freqScale: 1,
        withYarn: true, // llama.cpp passes the context's ext_factor and attn_factor to the local layers too
      },
      finalSoftcap: 30,
      attentionScale: 1,
      kvSources,
      perLayerEmbd,
      altup: {
        nInputs,
        activeIdx,
        sparsity: Array.from({ length: nLayers }, (_, il) => (il < SPARSE_LAYERS ? SPARSITY_STD_MUL : null)),
      },
    };
  },
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
};
