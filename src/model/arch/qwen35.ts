/**
 * `qwen35` (Qwen3.5 dense): llama.cpp's qwen35 graph. Recurrent layers (`attention.recurrent_layers`, else every
 * layer but each `full_attention_interval`-th, default 4) are gated DeltaNet blocks (`ssm.*` geometry); the others
 * gated full attention: q projected with a per-head output gate ([q | gate] per head), per-head q/k RMSNorm, partial
 * neox rope (llama.cpp's interleaved M-RoPE, which for text positions is plain neox over `rope.dimension_count`),
 * output × sigmoid(gate). The FFN's pre-norm is `post_attention_norm` (no post-norms).
 */

import type { DeltaNetDims } from '../../backend/delta-net-types.js';
import { LlmError } from '../../errors.js';
import type { GgufValue } from '../../gguf/types.js';
import { type ArchOptions, archOptions, type ModelConfig, modelMetadata, readStandardConfig } from '../config.js';
import { MODEL_LIMITS as L } from '../model-limits.js';
import { withoutNextnBlocks } from '../nextn-trunk.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const options = archOptions({ ropeKind: 'neox', qkNorm: true });

/** Most conv1d taps accepted (real Qwen3.5 models have 4): bounds the per-sequence state a header can ask for. */
const MAX_CONV_WIDTH = 256;

const invalid = (message: string, key: string, value: number): LlmError =>
  new LlmError('gguf-invalid', `reading model config: ${message}; the model file is broken`, {
    details: { key, value },
  });

/** qwen35: Qwen3.5 0.8B … 27B dense. */
export const qwen35: Architecture = {
  name: 'qwen35',
  config: (meta) => readQwen35Config(meta, 'qwen35', options),
  tensors: { ...LLAMA_CPP_TENSOR_NAMES, ffnNorm: 'blk.{i}.post_attention_norm.weight' },
  options,
};

/** The config of a qwen35-family file (`name`: qwen35, qwen35moe): gated attention and DeltaNet layers. */
export function readQwen35Config(
  fileMeta: Readonly<Record<string, GgufValue>>,
  name: string,
  archOpts: ArchOptions,
): ModelConfig {
  const meta = trunkMetadata(fileMeta, name);
  const r = modelMetadata(meta, name);
  const std = readStandardConfig(meta, name, archOpts);
  const nLayers = std.nLayers;
  const flags = r.numberArray(r.archKey('attention.recurrent_layers'), nLayers);
  const interval = r.boundedCount(r.archKey('full_attention_interval'), 4, 1, L.maxLayers, 'maxLayers');
  const recurrent = flags
    ? flags.map((f) => f !== 0)
    : Array.from({ length: nLayers }, (_, il) => (il + 1) % interval !== 0);
  checkRopeSections(meta, std, name);
  const base: ModelConfig = { ...std, attnOutputGate: true };
  if (!recurrent.some(Boolean)) return base;
  return { ...base, deltaNetLayers: recurrent, deltaNet: readDeltaNetDims(meta, name) };
}

/**
 * The metadata of the layers the main pass runs: without the `nextn_predict_layers` multi-token-prediction blocks
 * llama.cpp loads after them (per-layer arrays cut to match), and with a per-layer `attention.head_count_kv` that
 * marks recurrent layers 0 read as the attention layers' one value.
 */
function trunkMetadata(meta: Readonly<Record<string, GgufValue>>, name: string): Record<string, GgufValue> {
  const r = modelMetadata(meta, name);
  const all = r.boundedCount(r.archKey('block_count'), undefined, 1, L.maxLayers, 'maxLayers');
  // llama.cpp reads head_count_kv as one value or one per block (get_key_or_arr): any other length is refused before
  // the array is cut or collapsed below.
  r.numberArray(r.archKey('attention.head_count_kv'), all);
  const out: Record<string, GgufValue> = { ...withoutNextnBlocks(meta, name) };
  const kvKey = r.archKey('attention.head_count_kv');
  const kv = modelMetadata(out, name).numberArray(kvKey);
  const attentionKv = new Set(kv?.filter((h) => h > 0));
  if (kv?.includes(0) && attentionKv.size === 1) out[kvKey] = [...attentionKv][0]!;
  return out;
}

/** The DeltaNet geometry from the `ssm.*` keys, checked for consistency (llama.cpp asserts headK = headV). */
function readDeltaNetDims(meta: Readonly<Record<string, GgufValue>>, name: string): DeltaNetDims {
  const r = modelMetadata(meta, name);
  const k = (suffix: string): string => r.archKey(`ssm.${suffix}`);
  const convWidth = r.boundedCount(k('conv_kernel'), undefined, 1, MAX_CONV_WIDTH, 'maxConvWidth');
  const headK = r.boundedCount(k('state_size'), undefined, 1, L.maxHeadDim, 'maxHeadDim');
  const nKHeads = r.boundedCount(k('group_count'), undefined, 1, L.maxHeads, 'maxHeads');
  const nVHeads = r.boundedCount(k('time_step_rank'), undefined, 1, L.maxHeads, 'maxHeads');
  const inner = r.boundedCount(k('inner_size'), undefined, 1, L.maxEmbedding, 'maxEmbedding');
  if (nVHeads % nKHeads !== 0) {
    throw invalid(
      `'${k('time_step_rank')}' (${nVHeads} value heads) is not a multiple of '${k('group_count')}' (${nKHeads} key heads)`,
      k('time_step_rank'),
      nVHeads,
    );
  }
  if (inner !== headK * nVHeads) {
    throw invalid(
      `'${k('inner_size')}' is ${inner} but ${nVHeads} value heads ('${k('time_step_rank')}') of '${k('state_size')}' = ${headK} give ${headK * nVHeads}`,
      k('inner_size'),
      inner,
    );
  }
  return { convWidth, headK, nKHeads, headV: headK, nVHeads };
}

/**
 * `rope.dimension_sections` [t, h, w, e]: with text positions t = h = w = the token's position and e = 0, so the
 * interleaved M-RoPE is neox rope only when no rotated pair falls in the e section; refuse files where one would.
 */
function checkRopeSections(meta: Readonly<Record<string, GgufValue>>, c: ModelConfig, name: string): void {
  const r = modelMetadata(meta, name);
  const key = r.archKey('rope.dimension_sections');
  const s = r.numberArray(key);
  if (s === null) return;
  const [t = 0, h = 0, w = 0] = s;
  const total = s.reduce((a, b) => a + b, 0);
  for (let pair = 0; pair < c.ropeDims / 2; pair++) {
    const sector = total > 0 ? pair % total : pair;
    const m = sector % 3;
    if ((m === 0 && sector < 3 * t) || (m === 1 && sector < 3 * h) || (m === 2 && sector < 3 * w)) continue;
    throw new LlmError(
      'unsupported-arch',
      `reading model config: '${key}' = [${s.join(', ')}] leaves rotary pair ${pair} in the extra M-RoPE section, which text-only inference does not support`,
      { details: { key, sections: s } },
    );
  }
}
