/**
 * `gemma4` (text, dense): gemma3's block (GEGLU, per-head q/k norms, post-norms, √n_embd embedding scale) plus
 * a weightless per-head RMSNorm of V (V = K when a layer has no `attn_v`), attention scale 1, sliding layers with
 * their own head size (`key_length_swa`) and rope base (`rope.freq_base_swa`), `rope_freqs` on global layers only,
 * the last `attention.shared_kv_layers` layers reading an earlier layer's KV (llama.cpp: n_layer_kv_from_start − 2 for
 * sliding readers, − 1 for global ones), per-layer token embeddings (`embedding_length_per_layer_input`), an optional
 * per-layer output scale and the final-logit soft-cap (default 30). The MoE variant (26B-A4B; `expert_count` > 0) keeps
 * the dense FFN as a shared expert beside softmax-routed GELU experts (weights normalised, optional per-expert scale
 * `ffn_down_exps.scale`), each branch with its own norms (`MoeRouting.branchNorms`); every layer is then MoE (llama.cpp
 * decides per layer by the router's presence: a file mixing dense and MoE layers is refused naming the router).
 */

import { LlmError } from '../../errors.js';
import { archOptions, modelMetadata, readStandardConfig } from '../config.js';
import { MODEL_LIMITS } from '../model-limits.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const options = archOptions({
  ropeKind: 'neox',
  activation: 'gelu',
  qkNorm: true,
  postNorms: true,
  scaleEmbeddings: true,
  valueNorm: true,
  globalRopeFreqs: true,
});

/** The MoE variant's options: the dense FFN is the shared expert, the branches have their own norms. */
const moeOptions = archOptions({
  ...options,
  moeRouting: { gating: 'softmax', normWeights: true, shared: 'plain', branchNorms: true },
});

/** gemma4. */
export const gemma4: Architecture = {
  name: 'gemma4',
  config(meta) {
    const r = modelMetadata(meta, 'gemma4');
    const hasExperts = r.count(r.archKey('expert_count'), 0) > 0;
    const std = readStandardConfig(meta, 'gemma4', hasExperts ? moeOptions : options);
    const base = std.moe ? { ...std, moe: { ...std.moe, sharedDim: sharedWidth(std.layerFfnDims) } } : std;
    const L = MODEL_LIMITS;
    // Required keys, as llama.cpp reads them (no default).
    const slidingWindow = r.boundedCount(
      r.archKey('attention.sliding_window'),
      undefined,
      0,
      L.maxContextLength,
      'maxContextLength',
    );
    r.boundedCount(r.archKey('attention.key_length_swa'), undefined, 1, L.maxHeadDim, 'maxHeadDim');
    const patternKey = r.archKey('attention.sliding_window_pattern');
    const pattern = r.numberArray(patternKey, base.nLayers);
    if (pattern === null) {
      throw new LlmError(
        'gguf-invalid',
        `reading model config: '${patternKey}' must be an array of one flag per layer (${base.nLayers})`,
        { details: { key: patternKey } },
      );
    }
    const slidingLayers = pattern.map((f) => f !== 0);
    const perLayerEmbd = r.boundedCount(
      r.archKey('embedding_length_per_layer_input'),
      undefined,
      0,
      L.maxEmbedding,
      'maxEmbedding',
    );
    const sharedKey = r.archKey('attention.shared_kv_layers');
    const shared = r.boundedCount(sharedKey, 0, 0, L.maxLayers, 'maxLayers');
    const kvFromStart = base.nLayers - shared;
    const kvSources = Array.from({ length: base.nLayers }, (_, il) =>
      il < kvFromStart ? il : kvFromStart - (slidingLayers[il] ? 2 : 1),
    );
    if (shared > 0) {
      // llama.cpp requires two KV layers before the shared ones; a reader's source must match its geometry.
      if (kvFromStart < 2) {
        throw new LlmError(
          'gguf-invalid',
          `reading model config: '${sharedKey}' = ${shared} leaves ${kvFromStart} of ${base.nLayers} layers with their own KV (at least 2 are needed)`,
          { details: { key: sharedKey, value: shared, nLayers: base.nLayers } },
        );
      }
      for (let il = kvFromStart; il < base.nLayers; il++) {
        const src = kvSources[il];
        const same = slidingLayers[src] === slidingLayers[il] && base.layerKvHeads[src] === base.layerKvHeads[il];
        if (!same) {
          throw new LlmError(
            'gguf-invalid',
            `reading model config: '${sharedKey}' = ${shared} makes layer ${il} read layer ${src}'s KV, whose ` +
              `geometry differs (sliding ${slidingLayers[src]} vs ${slidingLayers[il]}, '${patternKey}')`,
            { details: { key: sharedKey, layer: il, source: src } },
          );
        }
      }
    }
    return {
      ...base,
      slidingWindow,
      slidingLayers: slidingWindow > 0 ? slidingLayers : new Array<boolean>(base.nLayers).fill(false),
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
      finalSoftcap: r.finite(r.archKey('final_logit_softcapping'), 30, { min: 0 }, 'the final soft-cap'),
      attentionScale: 1,
      kvSources,
      perLayerEmbd,
    };
  },
  // The MoE variant's shared expert is the dense FFN itself.
  tensors: {
    ...LLAMA_CPP_TENSOR_NAMES,
    ffnGateShexp: LLAMA_CPP_TENSOR_NAMES.ffnGate,
    ffnUpShexp: LLAMA_CPP_TENSOR_NAMES.ffnUp,
    ffnDownShexp: LLAMA_CPP_TENSOR_NAMES.ffnDown,
  },
  options,
};

/** The shared expert's width: the dense FFN's, which must then be one value for every layer. */
function sharedWidth(layerFfnDims: readonly number[]): number {
  const width = layerFfnDims[0];
  if (layerFfnDims.some((d) => d !== width)) {
    throw new LlmError(
      'unsupported-arch',
      `reading model config: this gemma4 mixture of experts has per-layer 'gemma4.feed_forward_length' values (${layerFfnDims.join(', ')}); its shared FFN must have one width`,
      { details: { key: 'gemma4.feed_forward_length' } },
    );
  }
  return width;
}
