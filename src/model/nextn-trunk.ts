/**
 * The multi-token-prediction blocks llama.cpp's converters append after a model's trunk (`<arch>.nextn_predict_layers`
 * trailing blocks, counted in `block_count` and in every per-layer array): llama.cpp's main pass runs only the
 * trunk (`n_layer()` = block_count − nextn) and skips their tensors. Readers of such architectures (qwen35, the
 * nemotron_h family) read the metadata through `withoutNextnBlocks` so the draft head is never run as a layer.
 */

import { LlmError } from '../errors.js';
import { type GgufValue, isGgufArray } from '../gguf/types.js';
import { modelMetadata } from './config.js';
import { MODEL_LIMITS as L } from './model-limits.js';

/** The per-layer keys whose one-per-block arrays also cover the trailing blocks. */
const PER_LAYER_SUFFIXES = [
  'attention.head_count',
  'attention.head_count_kv',
  'feed_forward_length',
  'attention.recurrent_layers',
  'expert_used_count',
  'expert_feed_forward_length',
] as const;

/**
 * `meta` with `block_count` cut to the trunk and each per-layer array of one entry per block cut to match (a copy;
 * `meta` itself when there are no trailing blocks). `gguf-invalid` naming the key when the blocks leave no trunk.
 */
export function withoutNextnBlocks(
  meta: Readonly<Record<string, GgufValue>>,
  name: string,
): Readonly<Record<string, GgufValue>> {
  const r = modelMetadata(meta, name);
  const nextnKey = r.archKey('nextn_predict_layers');
  const nextn = r.boundedCount(nextnKey, 0, 0, L.maxLayers, 'maxLayers');
  if (nextn === 0) return meta;
  const blockKey = r.archKey('block_count');
  const all = r.boundedCount(blockKey, undefined, 1, L.maxLayers, 'maxLayers');
  if (nextn >= all) {
    throw new LlmError(
      'gguf-invalid',
      `reading model config: '${nextnKey}' (${nextn}) leaves none of the ${all} blocks ('${blockKey}'); the model file is broken`,
      { details: { key: nextnKey, value: nextn } },
    );
  }
  const out: Record<string, GgufValue> = { ...meta, [blockKey]: all - nextn };
  for (const suffix of PER_LAYER_SUFFIXES) {
    const v = out[r.archKey(suffix)];
    if (isGgufArray(v) && v.length === all) out[r.archKey(suffix)] = v.slice(0, all - nextn) as GgufValue;
  }
  return out;
}
