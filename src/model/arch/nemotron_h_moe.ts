/**
 * `nemotron_h_moe` (Nemotron 3 Nano 30B-A3B and the other Nemotron-H MoE models): nemotron_h's blocks (read by the
 * same reader: Mamba-2 where `feed_forward_length` and `attention.head_count_kv` are 0, attention without rope where
 * only `feed_forward_length` is 0) whose FFN-only blocks are a mixture of experts instead of the dense relu² MLP, as
 * llama.cpp's nemotron-h `build_ffn_layer`: router probabilities by sigmoid, top-k selected with the required
 * per-expert bias `exp_probs_b`, weights normalised when `expert_weights_norm` and multiplied by
 * `expert_weights_scale`; ungated relu² experts (`ffn_up_exps` → relu² → `ffn_down_exps`) plus an ungated relu²
 * shared expert added as is, all on the block's one norm (`attn_norm`). Refused: the latent MoE projections
 * (`moe_latent_size`, Nemotron 3 Super) and grouped expert selection (`expert_group_count` > 1).
 */

import { LlmError } from '../../errors.js';
import { archOptions, modelMetadata } from '../config.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';
import { readNemotronHConfig } from './nemotron_h.js';

const NAME = 'nemotron_h_moe';
const options = archOptions({
  moeRouting: { gating: 'sigmoid', normWeights: false, shared: 'plain', requireSelectionBias: true, ungated: true },
});

/** nemotron_h_moe. */
export const nemotronHMoe: Architecture = {
  name: NAME,
  config(meta) {
    const base = readNemotronHConfig(meta, NAME, options);
    const r = modelMetadata(meta, NAME);
    // Grouped expert selection (`expert_group_count` > 1) is refused for every architecture by readMoeConfig.
    const latentKey = r.archKey('moe_latent_size');
    const latent = r.count(latentKey, 0);
    if (latent > 0) {
      throw new LlmError(
        'unsupported-arch',
        `reading model config: '${latentKey}' = ${latent}: latent MoE projections (ffn_latent_down / ffn_latent_up) are not supported`,
        { details: { arch: NAME, key: latentKey, value: latent } },
      );
    }
    const moe = base.moe!; // experts are required for this architecture (readStandardConfig checked them)
    const scaleKey = r.archKey('expert_weights_scale');
    const scale = r.finite(scaleKey, 0, { min: 0, max: 1e6 }, 'the multiplier of the routing weights');
    return {
      ...base,
      moe: {
        ...moe,
        normWeights: r.optionalBool(r.archKey('expert_weights_norm')) ?? false,
        weightsScale: scale === 0 ? 1 : Math.fround(scale), // llama.cpp: 0 means "no scaling"
        layerIsMoe: base.mlpLayers,
      },
    };
  },
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options,
};
