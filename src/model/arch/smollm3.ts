/**
 * `smollm3`: llama's block, except that every 4th layer (il + 1 ≡ 0 mod 4) applies no rope at all (NoPE), as
 * llama.cpp's smollm3 graph (`n_no_rope_layer_step` = 4, fixed, not read from the file).
 */

import { archOptions, readStandardConfig } from '../config.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const options = archOptions();

/** llama.cpp's fixed NoPE period of smollm3. */
const NO_ROPE_LAYER_STEP = 4;

/** smollm3: SmolLM3-3B. */
export const smollm3: Architecture = {
  name: 'smollm3',
  config(meta) {
    const base = readStandardConfig(meta, 'smollm3', options);
    return {
      ...base,
      noRopeLayers: Array.from({ length: base.nLayers }, (_, il) => (il + 1) % NO_ROPE_LAYER_STEP === 0),
    };
  },
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
};
