/**
 * `mistral3` (Ministral 3 text model): llama's block (normal rope, optional `attn_output.bias`) with its rope
 * scaling from the file (YaRN with `rope.scaling.yarn_beta_fast/_slow` and `yarn_log_multiplier`, which llama.cpp
 * reads for this architecture only: `yarnKeys`) and llama 4's attention temperature: with
 * `attention.temperature_scale` = s ≠ 0, q of the token at position p is multiplied by 1 + s · ln(⌊p / n⌋ + 1)
 * after rope, n being `rope.scaling.original_context_length` (default: the training context), which must then be
 * non-zero. Optional FFN biases (never published for Ministral 3) are not read.
 */

import { LlmError } from '../../errors.js';
import { archOptions, modelMetadata, readStandardConfig } from '../config.js';
import { MODEL_LIMITS } from '../model-limits.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const options = archOptions({ yarnKeys: true });

/** mistral3. */
export const mistral3: Architecture = {
  name: 'mistral3',
  config(meta) {
    const base = readStandardConfig(meta, 'mistral3', options);
    const r = modelMetadata(meta, 'mistral3');
    const scaleKey = r.archKey('attention.temperature_scale');
    const scale = r.finite(scaleKey, 0, {}, 'the attention temperature');
    if (scale === 0) return base;
    const floorKey = r.archKey('rope.scaling.original_context_length');
    const floor = r.boundedCount(
      floorKey,
      base.trainContextLength,
      0,
      MODEL_LIMITS.maxContextLength,
      'maxContextLength',
    );
    if (floor === 0) {
      throw new LlmError(
        'gguf-invalid',
        `reading model config: '${scaleKey}' = ${scale} needs a non-zero '${floorKey}' (or context_length); the model file is broken`,
        { details: { key: floorKey, value: floor } },
      );
    }
    return { ...base, attnTemperature: { scale, floor } };
  },
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
};
