/**
 * `qwen2vl` (Qwen2-VL, Qwen2.5-VL language models): qwen2's block (Q/K/V biases, NEOX pairs) with M-RoPE —
 * `rope.dimension_sections` [t, h, w, e] consecutive sections of rotated pairs, each taking its angle from one
 * position stream (llama.cpp src/models/qwen2vl.cpp, `ggml_rope_multi`). Text tokens sit at (p, p, p, 0).
 */

import { archOptions, readStandardConfig } from '../config.js';
import { readRopeSections } from '../rope-sections.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const options = archOptions({ ropeKind: 'neox' });

/** qwen2vl. */
export const qwen2vl: Architecture = {
  name: 'qwen2vl',
  config: (meta) => {
    const c = readStandardConfig(meta, 'qwen2vl', options);
    return { ...c, ropeMulti: readRopeSections(meta, c, false) };
  },
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
};
