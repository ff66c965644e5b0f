/**
 * `nemotron_h` (Nemotron-H dense): llama.cpp's nemotron-h graph. Each block is one of three kinds, from the per-layer
 * arrays: `feed_forward_length` > 0 — an ungated relu² MLP (ffn_up → relu² → ffn_down) and nothing else; else
 * `attention.head_count_kv` 0 — a Mamba-2 mixer (`ssm.*` geometry); else attention without rope. Every block is
 * x += f(attn_norm(x)), no FFN after a mixer. `attention.layer_norm_rms_epsilon` falls back to
 * `attention.layer_norm_epsilon`. Trailing multi-token-prediction blocks (`nextn_predict_layers`, which llama.cpp's
 * converter appends for Nemotron 3 checkpoints with an MTP head) are not part of the pass. The experts variant is `nemotron_h_moe` (nemotron_h_moe.ts, same reader).
 */

import type { GgufValue } from '../../gguf/types.js';
import { type ArchOptions, archOptions, type ModelConfig, modelMetadata, readStandardConfig } from '../config.js';
import { readMamba2Dims } from '../mamba2-config.js';
import { MODEL_LIMITS as L } from '../model-limits.js';
import { withoutNextnBlocks } from '../nextn-trunk.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const NAME = 'nemotron_h';
const options = archOptions();

/** nemotron_h's config reader, for `name` (nemotron_h, or nemotron_h_moe whose FFN layers route to experts). */
export function readNemotronHConfig(
  wholeMeta: Readonly<Record<string, GgufValue>>,
  name: string,
  options: ArchOptions,
): ModelConfig {
  // A trailing multi-token-prediction block (Nemotron 3 with `nextn_predict_layers`) is not part of the main pass.
  const fileMeta = withoutNextnBlocks(wholeMeta, name);
  const r0 = modelMetadata(fileMeta, name);
  const nLayers = r0.boundedCount(r0.archKey('block_count'), undefined, 1, L.maxLayers, 'maxLayers');
  const perLayer = (key: string): number[] | null => r0.numberArray(key, nLayers);
  // 0 entries of the per-layer arrays mark the layers without an MLP / without KV; the standard reader wants them
  // positive, so read them as the other layers' value and keep the kinds here (a single value applies as it is).
  const meta: Record<string, GgufValue> = { ...fileMeta };
  const ffKey = r0.archKey('feed_forward_length');
  const kvKey = r0.archKey('attention.head_count_kv');
  const ff = perLayer(ffKey);
  const kv = perLayer(kvKey);
  if (ff) meta[ffKey] = ff.map((v) => (v === 0 ? Math.max(1, ...ff) : v)) as GgufValue;
  const attnKv = kv?.find((v) => v > 0);
  if (kv && attnKv !== undefined) meta[kvKey] = kv.map((v) => (v === 0 ? attnKv : v)) as GgufValue;
  const rmsKey = r0.archKey('attention.layer_norm_rms_epsilon');
  const epsKey = r0.archKey('attention.layer_norm_epsilon');
  if (!r0.has(rmsKey) && r0.has(epsKey)) meta[rmsKey] = fileMeta[epsKey]!;
  const base = readStandardConfig(meta, name, options);
  const mlp = base.layerFfnDims.map((d, il) => (ff ? ff[il] > 0 : d > 0));
  const recurrent = mlp.map((m, il) => !m && kv?.[il] === 0);
  const layerFfnDims = base.layerFfnDims.map((d, il) => (mlp[il] ? d : 0));
  return {
    ...base,
    layerFfnDims,
    ffnDim: Math.max(0, ...layerFfnDims),
    noRopeLayers: new Array<boolean>(nLayers).fill(true),
    mlpLayers: mlp,
    ...(recurrent.some(Boolean) ? { mamba2Layers: recurrent, mamba2: readMamba2Dims(meta, name) } : {}),
  };
}

/** nemotron_h. */
export const nemotronH: Architecture = {
  name: NAME,
  config: (fileMeta) => readNemotronHConfig(fileMeta, NAME, options),
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
};
