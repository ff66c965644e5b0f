/**
 * `granitehybrid` (Granite 4.0 H): llama.cpp's granite-hybrid graph. A layer whose `attention.head_count_kv` entry is
 * 0 is a Mamba-2 block (`ssm.*` geometry, llama.cpp's `build_mamba2_layer`), the others llama attention; every layer
 * then has an FFN — dense gated, or, when the file declares `expert_count`, granitemoe's softmax-routed experts (weights
 * normalised) plus an ungated shared expert when `expert_shared_feed_forward_length` > 0. Granite's multipliers apply
 * (`embedding_scale`, `residual_scale` on every sub-block's output incl. the Mamba-2 one, `attention.scale`,
 * 1 / `logit_scale`; absent or zero = none) and `rope.scaling.finetuned` = false switches rope off (Granite 4.0 H is NoPE).
 */

import { archOptions, modelMetadata, readStandardConfig } from '../config.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';
import { readMamba2Dims, splitRecurrentLayers } from '../mamba2-config.js';

const NAME = 'granitehybrid';
const dense = archOptions();
const moe = archOptions({
  moeRouting: { gating: 'softmax', normWeights: true, shared: 'plain', expertWidthKey: 'feed_forward_length' },
});

/** granitehybrid. */
export const granitehybrid: Architecture = {
  name: NAME,
  config(fileMeta) {
    const { meta, recurrent } = splitRecurrentLayers(fileMeta, NAME);
    const r = modelMetadata(meta, NAME);
    const hasExperts = r.count(r.archKey('expert_count'), 0) > 0;
    const base = readStandardConfig(meta, NAME, hasExperts ? moe : dense);
    const multiplier = (suffix: string, why: string): number => r.finite(r.archKey(suffix), 0, { min: 0 }, why);
    const logitScale = multiplier('logit_scale', 'the logit divisor');
    const embeddingScale = multiplier('embedding_scale', 'the embedding multiplier');
    const residualScale = multiplier('residual_scale', 'the residual multiplier');
    const attentionScale = multiplier('attention.scale', 'the attention multiplier');
    const rope = r.optionalBool(r.archKey('rope.scaling.finetuned')) ?? true;
    const hasShared = r.count(r.archKey('expert_shared_feed_forward_length'), 0) > 0;
    const m = base.moe;
    return {
      ...base,
      logitScale: logitScale === 0 ? 1 : Math.fround(1 / logitScale),
      embeddingScale: embeddingScale === 0 ? 1 : embeddingScale,
      residualScale: residualScale === 0 ? 1 : residualScale,
      attentionScale: attentionScale === 0 ? base.attentionScale : attentionScale,
      noRopeLayers: new Array<boolean>(base.nLayers).fill(!rope),
      moe: m && { ...m, shared: hasShared ? 'plain' : 'none', sharedDim: hasShared ? m.sharedDim : 0 },
      ...(recurrent ? { mamba2Layers: recurrent, mamba2: readMamba2Dims(meta, NAME) } : {}),
    };
  },
  tensors: LLAMA_CPP_TENSOR_NAMES,
  options: dense,
};
