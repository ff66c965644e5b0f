/**
 * `qwen3vl` (Qwen3-VL dense language models): qwen3's block (per-head q/k RMSNorm before rope, NEOX pairs) with
 * interleaved M-RoPE — pair i of `rope.dimension_sections` [t, h, w, e] takes stream t, h, w round-robin while its
 * section lasts, else e (llama.cpp src/models/qwen3vl.cpp, `GGML_ROPE_TYPE_IMROPE`) — and deepstack: image rows carry
 * `n_deepstack_layers` extra n_embd blocks, block j added to the residual after layer j.
 */

import { LlmError } from '../../errors.js';
import { archOptions, modelMetadata, readStandardConfig } from '../config.js';
import { readRopeSections } from '../rope-sections.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const options = archOptions({ ropeKind: 'neox', qkNorm: true });

/** qwen3vl. */
export const qwen3vl: Architecture = {
  name: 'qwen3vl',
  config: (meta) => {
    const c = readStandardConfig(meta, 'qwen3vl', options);
    const r = modelMetadata(meta, 'qwen3vl');
    const key = r.archKey('n_deepstack_layers');
    const deepstack = r.count(key, 0);
    if (deepstack >= c.nLayers) {
      throw new LlmError(
        'gguf-invalid',
        `reading model config: '${key}' = ${deepstack} deepstack layers do not fit ${c.nLayers} layers; the model file is broken`,
        { details: { key, value: deepstack, nLayers: c.nLayers } },
      );
    }
    return { ...c, ropeMulti: readRopeSections(meta, c, true), deepstackLayers: deepstack };
  },
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
};
