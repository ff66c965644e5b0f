/**
 * `modern-bert` (ModernBERT, granite-embedding-r2): an encoder with pre-norm blocks (llama.cpp
 * `src/models/modern-bert.cpp`): token embedding → LayerNorm (`token_embd_norm`, no bias); per layer x += o(attn(
 * LN(x))) (`attn_norm`, absent on layer 0: identity) with a fused `attn_qkv` and NEOX rope, then x += down(glu(up(
 * LN(x)))) (`ffn_norm`; `ffn_up` holds the gate's rows then the up's, GEGLU unless `hidden_activation` says silu);
 * no biases anywhere; a final `output_norm`. Local layers (all but every `sliding_window_pattern`-th, default 3,
 * starting with layer 0) see ±`sliding_window`/2 around each token with their own rope base `rope.freq_base_swa`
 * (default 10000, as llama.cpp); the others the whole sequence. Run by `model/encoder.ts`.
 */

import { LlmError } from '../../errors.js';
import { archOptions, modelMetadata, readStandardConfig } from '../config.js';
import { MODEL_LIMITS as L } from '../model-limits.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const NAME = 'modern-bert';
const options = archOptions({
  ropeKind: 'neox',
  activation: 'gelu',
  preNorms: false,
  fusedQkv: true,
  symmetricWindow: true,
});

/** `hidden_activation` → the GLU's activation (llama.cpp `LLM_FFN_OP_TYPES_FROM_STRING`; unknown names: GEGLU). */
const ACTIVATIONS: Readonly<Record<string, 'gelu' | 'silu' | null>> = {
  gelu: 'gelu',
  geglu: 'gelu',
  silu: 'silu',
  swish: 'silu',
  swiglu: 'silu',
  relu: null,
  reglu: null,
};

/** modern-bert. */
export const modernBert: Architecture = {
  name: NAME,
  config(meta) {
    const base = readStandardConfig(meta, NAME, options);
    const r = modelMetadata(meta, NAME);
    const normEps = r.finite(r.archKey('attention.layer_norm_epsilon'), undefined, { min: 0 }, 'the LayerNorm epsilon');
    const actKey = r.archKey('hidden_activation');
    const actName = r.has(actKey) ? r.string(actKey) : 'gelu';
    const activation = ACTIVATIONS[actName] === undefined ? 'gelu' : ACTIVATIONS[actName];
    if (activation === null) {
      throw new LlmError('unsupported-arch', `loading model: ${NAME} with '${actKey}' = ${actName} is not supported`, {
        details: { key: actKey, value: actName },
      });
    }
    const window = r.boundedCount(r.archKey('attention.sliding_window'), 0, 0, L.maxContextLength, 'maxContextLength');
    const patternKey = r.archKey('attention.sliding_window_pattern');
    const flags = r.numberArray(patternKey, base.nLayers);
    const period = flags ? 0 : r.boundedCount(patternKey, 3, 0, L.maxLayers, 'maxLayers');
    // llama.cpp's dense-first pattern: layer il is local unless il % period = 0 (period 0: every layer local).
    const slidingLayers = Array.from({ length: base.nLayers }, (_, il) =>
      window > 0 ? (flags ? flags[il] !== 0 : period === 0 || il % period !== 0) : false,
    );
    const thetaSwa = r.finite(
      r.archKey('rope.freq_base_swa'),
      10000,
      { min: 0, exclusiveMin: true },
      'the local rope base',
    );
    return {
      ...base,
      normEps,
      activation,
      slidingWindow: window,
      slidingLayers,
      // llama.cpp passes the context's ext_factor and attn_factor to the local layers too.
      ropeSwa: window > 0 ? { theta: thetaSwa, freqScale: 1, withYarn: true } : null,
    };
  },
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
  encoder: { ffn: 'glu-fused', rope: true, preNorm: true },
};
