/**
 * `lfm2` (LFM2 / LFM2.5): llama.cpp's lfm2 graph. Layers whose `attention.head_count_kv` entry is 0 are short gated
 * convolution blocks (in_proj → B·x → causal depthwise conv of `shortconv.l_cache` taps → C· → out_proj), the
 * others GQA attention with per-head q/k RMSNorm and neox rope (sliding over `attention.sliding_window` positions when
 * the file sets one); every layer has the SwiGLU FFN. The final norm is
 * stored as `token_embd_norm.weight` (llama.cpp's `LLM_TENSOR_OUTPUT_NORM_LFM2` naming quirk).
 */

import { LlmError } from '../../errors.js';
import type { GgufValue } from '../../gguf/types.js';
import { type ArchOptions, archOptions, type ModelConfig, modelMetadata, readStandardConfig } from '../config.js';
import { MODEL_LIMITS as L } from '../model-limits.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const options = archOptions({ ropeKind: 'neox', qkNorm: true });

/** Most convolution taps accepted (real LFM2 models have 3): bounds the per-sequence state a header can ask for. */
const MAX_CONV_WIDTH = 256;

/** lfm2: LFM2 / LFM2.5 (350M … 2.6B). */
export const lfm2: Architecture = {
  name: 'lfm2',
  config: (meta) => readLfm2Config(meta, 'lfm2', options, true),
  tensors: { ...LLAMA_CPP_TENSOR_NAMES, outputNorm: 'token_embd_norm.weight' },
  options,
};

/**
 * The config of an lfm2-family file (`name`: lfm2, lfm2moe): recurrent layers from the per-layer KV head counts, the
 * short-convolution width and, with `readSwa` (lfm2 only, as llama.cpp), the attention layers' sliding window.
 */
export function readLfm2Config(
  meta: Readonly<Record<string, GgufValue>>,
  name: string,
  archOpts: ArchOptions,
  readSwa: boolean,
): ModelConfig {
  const r = modelMetadata(meta, name);
  const nLayers = r.boundedCount(r.archKey('block_count'), undefined, 1, L.maxLayers, 'maxLayers');
  const kvKey = r.archKey('attention.head_count_kv');
  // Per layer: 0 KV heads marks a recurrent (short-convolution) layer, as llama.cpp's `is_recr`.
  const kvHeads = r.has(kvKey) ? r.boundedCounts(kvKey, undefined, nLayers, 0, L.maxHeads, 'maxHeads') : null;
  const recurrent = Array.from({ length: nLayers }, (_, il) => kvHeads !== null && kvHeads[il] === 0);
  const attentionKv = kvHeads?.filter((h) => h > 0) ?? [];
  // The attention layers' KV head count stands for every layer in the shared reader (recurrent ones have no KV).
  const standard: Record<string, GgufValue> = { ...meta };
  if (kvHeads !== null) {
    if (attentionKv.length > 0) standard[kvKey] = attentionKv[0];
    else delete standard[kvKey];
  }
  const std = readStandardConfig(standard, name, archOpts);
  // `attention.sliding_window` > 0: every attention layer slides (llama.cpp's LLAMA_SWA_TYPE_STANDARD for lfm2).
  const window = readSwa
    ? r.boundedCount(r.archKey('attention.sliding_window'), 0, 0, L.maxContextLength, 'maxContextLength')
    : 0;
  const base = window > 0 ? { ...std, slidingWindow: window, slidingLayers: recurrent.map((rec) => !rec) } : std;
  if (!recurrent.some(Boolean)) return base;
  const widthKey = r.archKey('shortconv.l_cache');
  if (!r.has(widthKey)) {
    throw new LlmError(
      'gguf-invalid',
      `reading model config: '${kvKey}' marks ${recurrent.filter(Boolean).length} layer(s) as short-convolution layers (0 KV heads) ` +
        `but '${widthKey}' is missing; the model file is broken`,
      { details: { key: kvKey, missing: widthKey } },
    );
  }
  return {
    ...base,
    shortConvLayers: recurrent,
    shortConvWidth: r.boundedCount(widthKey, undefined, 2, MAX_CONV_WIDTH, 'maxConvWidth'),
  };
}
