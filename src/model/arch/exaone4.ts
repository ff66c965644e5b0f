/**
 * `exaone4` (EXAONE 4.0): olmo2's layout — no pre-norms, post-attention and post-FFN norms — with per-head q/k
 * RMSNorm before NEOX rope. As llama.cpp, only the 64-layer model (32B) is hybrid: sliding-window layers by
 * `attention.sliding_window_pattern` (default: every 4th layer global) with `attention.sliding_window` (default
 * 4096), where the sliding layers rotate (global base and scaling) and the global ones use no rope at all (NoPE);
 * every other depth (the 30-layer 1.2B) is all-global with rope on every layer, whatever the file's window says.
 */

import { archOptions, modelMetadata, readSlidingLayers, readStandardConfig } from '../config.js';
import { MODEL_LIMITS } from '../model-limits.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';
import { requireSquareAttention } from '../square-attention.js';

const options = archOptions({ ropeKind: 'neox', qkNorm: true, preNorms: false, postNorms: true });

/** llama.cpp's exaone4 is hybrid (iSWA) only at this depth. */
const HYBRID_LAYER_COUNT = 64;

/** exaone4. */
export const exaone4: Architecture = {
  name: 'exaone4',
  config(meta) {
    const base = requireSquareAttention(readStandardConfig(meta, 'exaone4', options));
    if (base.nLayers !== HYBRID_LAYER_COUNT) return base;
    const r = modelMetadata(meta, 'exaone4');
    const slidingWindow = r.boundedCount(
      r.archKey('attention.sliding_window'),
      4096,
      0,
      MODEL_LIMITS.maxContextLength,
      'maxContextLength',
    );
    const slidingLayers = readSlidingLayers(meta, 'exaone4', base.nLayers, 4);
    return { ...base, slidingWindow, slidingLayers, noRopeLayers: slidingLayers.map((s) => !s) };
  },
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
};
