/**
 * `rope.dimension_sections` of the multi-stream rope architectures (qwen2vl, qwen3vl; llama.cpp
 * `get_key_or_arr(LLM_KV_ROPE_DIMENSION_SECTIONS, …, 4, required)`): rotated pairs per position stream [t, h, w, e],
 * checked so that a file whose sections do not fit its heads is `gguf-invalid` naming the key.
 */

import { LlmError } from '../errors.js';
import type { GgufValue } from '../gguf/types.js';
import type { RopeSections } from '../backend/rope-multi.js';
import { type ModelConfig, modelMetadata } from './config.js';

/**
 * The sections of `config`'s file, `interleaved` as the architecture lays them out. The key is required; it holds
 * 1…4 non-negative integers (missing ones are 0) of which t, h or w is positive, summing to at most the rotated
 * dimensions (ggml `sect_dims ≤ ne0`); the rope must rotate whole heads (llama.cpp asserts n_rot = head size).
 */
export function readRopeSections(
  meta: Readonly<Record<string, GgufValue>>,
  config: ModelConfig,
  interleaved: boolean,
): RopeSections {
  const r = modelMetadata(meta, config.arch);
  const key = r.archKey('rope.dimension_sections');
  const fail = (why: string, details: Record<string, unknown>): LlmError =>
    new LlmError('gguf-invalid', `reading model config: '${key}' ${why}; the model file is broken`, {
      details: { key, ...details },
    });
  const length = r.arrayLength(key);
  if (length === null) throw fail('is missing or not an array (M-RoPE needs the rotated pairs of each stream)', {});
  if (length < 1 || length > 4) throw fail(`has ${length} entries, expected 1 to 4`, { entries: length });
  const values = r.numberArray(key) ?? [];
  const s = [0, 1, 2, 3].map((i) => values[i] ?? 0) as [number, number, number, number];
  const total = s[0] + s[1] + s[2] + s[3];
  if (!s.every((v) => Number.isSafeInteger(v) && v >= 0) || s[0] + s[1] + s[2] === 0 || total > config.ropeDims) {
    throw fail(
      `= [${s.join(', ')}] is not 4 counts of rotated pairs with t, h or w > 0 and a sum ≤ ${config.ropeDims}`,
      {
        sections: s,
        ropeDims: config.ropeDims,
      },
    );
  }
  if (config.ropeDims !== config.headDim) {
    throw new LlmError(
      'gguf-invalid',
      `reading model config: M-RoPE rotates whole heads, but '${r.archKey('rope.dimension_count')}' = ${config.ropeDims} ≠ head size ${config.headDim}`,
      { details: { key: r.archKey('rope.dimension_count'), ropeDims: config.ropeDims, headDim: config.headDim } },
    );
  }
  return { sections: s, interleaved };
}
