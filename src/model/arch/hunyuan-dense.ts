/**
 * `hunyuan-dense` (Hunyuan 0.5B–7B dense): llama's block with NEOX rope and per-head q/k RMSNorm applied after rope
 * (not before, as qwen3), as llama.cpp's hunyuan graph. `rope.scaling.alpha` (NTK-aware scaling) raises the rope
 * base to freq_base · alpha^(head_dim / (head_dim − 2)), computed in float as llama.cpp.
 */

import { LlmError } from '../../errors.js';
import { archOptions, modelMetadata, readStandardConfig } from '../config.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const options = archOptions({ ropeKind: 'neox', qkNorm: true, qkNormAfterRope: true });

/** hunyuan-dense. */
export const hunyuanDense: Architecture = {
  name: 'hunyuan-dense',
  config(meta) {
    const base = readStandardConfig(meta, 'hunyuan-dense', options);
    const r = modelMetadata(meta, 'hunyuan-dense');
    const alpha = r.finite(r.archKey('rope.scaling.alpha'), 0, { min: 0 }, 'the NTK rope alpha');
    if (alpha === 0) return base;
    const d = base.headDim;
    const f = Math.fround;
    const ropeTheta = f(base.ropeTheta * f(Math.pow(alpha, f(f(d) / f(d - 2)))));
    if (!(Number.isFinite(ropeTheta) && ropeTheta > 0)) {
      throw new LlmError(
        'gguf-invalid',
        `reading model config: '${r.archKey('rope.scaling.alpha')}' = ${alpha} makes the rope base ${ropeTheta}; the model file is broken`,
        { details: { key: r.archKey('rope.scaling.alpha'), value: alpha } },
      );
    }
    return { ...base, ropeTheta };
  },
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
};
