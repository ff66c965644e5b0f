/**
 * What the Mamba-2 hybrids (granitehybrid, nemotron_h, falcon-h1) read alike: the `ssm.*` geometry, checked for
 * consistency as llama.cpp's `build_mamba2_layer` asserts it (gguf-invalid naming the key instead of an abort), and
 * the per-layer `attention.head_count_kv` whose 0 entries mark the recurrent layers.
 */

import type { Mamba2Dims } from '../backend/mamba2.js';
import { LlmError } from '../errors.js';
import type { GgufValue } from '../gguf/types.js';
import { modelMetadata } from './config.js';
import { MODEL_LIMITS as L } from './model-limits.js';

/** Most conv1d taps accepted (real Mamba-2 models have 4): bounds the per-sequence state a header can ask for. */
const MAX_CONV_WIDTH = 256;
/** Largest SSM state per channel accepted (real models have 64–256). */
const MAX_STATE_SIZE = 4096;

const invalid = (message: string, key: string, value: number): LlmError =>
  new LlmError('gguf-invalid', `reading model config: ${message}; the model file is broken`, {
    details: { key, value },
  });

/** The Mamba-2 geometry of `arch` from its `ssm.*` keys. */
export function readMamba2Dims(meta: Readonly<Record<string, GgufValue>>, arch: string): Mamba2Dims {
  const r = modelMetadata(meta, arch);
  const k = (suffix: string): string => r.archKey(`ssm.${suffix}`);
  const convWidth = r.boundedCount(k('conv_kernel'), undefined, 1, MAX_CONV_WIDTH, 'maxConvWidth');
  const dState = r.boundedCount(k('state_size'), undefined, 1, MAX_STATE_SIZE, 'maxStateSize');
  const nGroups = r.boundedCount(k('group_count'), undefined, 1, L.maxHeads, 'maxHeads');
  const nHeads = r.boundedCount(k('time_step_rank'), undefined, 1, L.maxHeads, 'maxHeads');
  const inner = r.boundedCount(k('inner_size'), undefined, 1, L.maxEmbedding, 'maxEmbedding');
  if (inner % nHeads !== 0) {
    throw invalid(
      `'${k('inner_size')}' = ${inner} is not a multiple of '${k('time_step_rank')}' = ${nHeads} heads`,
      k('inner_size'),
      inner,
    );
  }
  if (nHeads % nGroups !== 0) {
    throw invalid(
      `'${k('time_step_rank')}' = ${nHeads} heads cannot be grouped over '${k('group_count')}' = ${nGroups} groups (not a divisor)`,
      k('group_count'),
      nGroups,
    );
  }
  return { convWidth, dState, nGroups, nHeads, headDim: inner / nHeads };
}

/**
 * The metadata with a per-layer `attention.head_count_kv` whose 0 entries (recurrent layers) read as the attention
 * layers' first value, and which layers those 0 entries were (all false when the key is one value).
 */
export function splitRecurrentLayers(
  meta: Readonly<Record<string, GgufValue>>,
  arch: string,
): { readonly meta: Record<string, GgufValue>; readonly recurrent: readonly boolean[] | null } {
  const r = modelMetadata(meta, arch);
  const key = r.archKey('attention.head_count_kv');
  const kv = r.numberArray(key);
  if (kv === null || !kv.includes(0)) return { meta: { ...meta }, recurrent: null };
  const attention = kv.find((h) => h > 0);
  if (attention === undefined) return { meta: { ...meta }, recurrent: null }; // all 0: readStandardConfig names it
  return {
    meta: { ...meta, [key]: kv.map((h) => (h === 0 ? attention : h)) as GgufValue },
    recurrent: kv.map((h) => h === 0),
  };
}
