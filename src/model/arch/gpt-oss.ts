/**
 * `gpt-oss` (gpt-oss-20b / 120b; llama.cpp `LLM_ARCH_OPENAI_MOE`, `openai-moe.cpp`): llama-style blocks with NEOX
 * rope (YaRN in the released models), attention with per-head learned sink logits (`attn_sinks`) and an output bias,
 * sliding-window attention on every other layer (`attention.sliding_window`, required; pattern 2: even layers slide
 * unless `attention.sliding_window_pattern` says otherwise), and a mixture of experts after the pre-FFN norm (which
 * llama.cpp names `post_attention_norm`): a biased router whose top-k logits are softmaxed into the weights
 * ('softmax-weight'), biased expert projections and the clamped SwiGLU (α 1.702, limit 7).
 */

import { LlmError } from '../../errors.js';
import { archOptions, modelMetadata, readSlidingLayers, readStandardConfig } from '../config.js';
import { MODEL_LIMITS } from '../model-limits.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const NAME = 'gpt-oss';

const options = archOptions({
  ropeKind: 'neox',
  attnSinks: true,
  moeRouting: { gating: 'softmax-weight', normWeights: false, shared: 'none', oai: true },
});

/** gpt-oss. */
export const gptOss: Architecture = {
  name: NAME,
  config(meta) {
    const base = readStandardConfig(meta, NAME, options);
    const r = modelMetadata(meta, NAME);
    const slidingWindow = r.boundedCount(
      r.archKey('attention.sliding_window'),
      undefined,
      1,
      MODEL_LIMITS.maxContextLength,
      'maxContextLength',
    );
    // llama.cpp lets sliding layers have their own base (YaRN still applying); released files have none.
    const swaBase = r.finite(r.archKey('rope.freq_base_swa'), base.ropeTheta, {}, 'rope');
    if (swaBase !== base.ropeTheta) {
      throw new LlmError(
        'unsupported-arch',
        `reading model config: gpt-oss with its own sliding-layer rope base ('${r.archKey('rope.freq_base_swa')}' = ${swaBase}) is not supported`,
        { details: { arch: NAME, key: r.archKey('rope.freq_base_swa'), value: swaBase } },
      );
    }
    return { ...base, slidingWindow, slidingLayers: readSlidingLayers(meta, NAME, base.nLayers, 2) };
  },
  tensors: { ...LLAMA_CPP_TENSOR_NAMES, ffnNorm: 'blk.{i}.post_attention_norm.weight' },
  options,
};
