/**
 * Mixture-of-experts hyper-parameters, read as llama.cpp reads them (`llama-model.cpp` `load_hparams` and the MoE
 * architectures' `load_arch_hparams`): `expert_count`, `expert_used_count` (one value or one per layer),
 * `expert_feed_forward_length` (per layer; default n_ff / n_expert_used) and `expert_shared_feed_forward_length`
 * (default n_ff). How the router turns its logits into weights is the architecture's choice (`MoeRouting`), as
 * llama.cpp's graphs hard-code it per architecture; `expert_weights_scale` is not read by any of them (llama.cpp's
 * default 0 means "no scaling").
 */

import { LlmError } from '../errors.js';
import type { MetadataReader } from '../gguf/metadata-reader.js';
import { MODEL_LIMITS as L } from './model-limits.js';

/** An architecture's routing choices (llama.cpp `build_moe_ffn` arguments of its graph). */
export interface MoeRouting {
  /** Router probabilities: softmax over the experts, or an independent sigmoid per expert. */
  readonly gating: 'softmax' | 'sigmoid' | 'softmax-weight';
  /** Divide the selected experts' weights by their sum (`norm_w`; qwen3moe true, qwen2moe/olmoe false). */
  readonly normWeights: boolean;
  /** A shared expert every token runs: none, plain (added as is) or gated by sigmoid(x · ffn_gate_inp_shexp). */
  readonly shared: 'none' | 'plain' | 'gated';
  /**
   * Where one expert's width comes from: `expert_feed_forward_length` (default n_ff / n_expert_used; qwen*moe), or
   * `feed_forward_length` itself (olmoe's llama.cpp graph never reads the expert key).
   */
  readonly expertWidthKey?: 'expert_feed_forward_length' | 'feed_forward_length';
  /**
   * gpt-oss: the router and every expert projection carry biases (`ffn_gate_inp.bias`, `ffn_{gate,up,down}_exps.bias`,
   * required) and the experts' GLU is the clamped SwiGLU (`swiglu-oai`).
   */
  readonly oai?: boolean;
  /** Every MoE layer must have the selection bias `exp_probs_b` (lfm2moe; elsewhere it is optional). */
  readonly requireSelectionBias?: boolean;
  /**
   * gemma4's arrangement: the router reads rmsNorm(x) · `ffn_gate_inp.scale` / √nEmbd, the experts their own pre-norm
   * (`pre_ffw_norm_2`) with a post-norm (`post_ffw_norm_2`), the shared expert (the dense FFN) `ffn_norm` with a
   * post-norm (`post_ffw_norm_1`), and the layer's post-FFN norm covers their sum.
   */
  readonly branchNorms?: boolean;
  /**
   * The file holds gate and up experts as one stack `ffn_gate_up_exps` (per expert its gate rows, then its up rows), as
   * llama.cpp accepts in place of the two; set from the tensors when the config is read (`readModelConfig`).
   */
  readonly fusedGateUp?: boolean;
  /**
   * nemotron_h_moe: the experts and the shared expert have no gate (no `ffn_gate_exps` / `ffn_gate_shexp`); their
   * hidden layer is relu²(up), as llama.cpp's `build_moe_ffn` / `build_ffn` with LLM_FFN_RELU_SQR and no gate.
   */
  readonly ungated?: boolean;
}

/** The mixture-of-experts part of a model's config. */
export interface MoeConfig extends MoeRouting {
  /** Experts per MoE layer (`expert_count`). */
  readonly nExperts: number;
  /** Experts each token uses, per layer (`expert_used_count`), each in 1 … nExperts. */
  readonly layerUsed: readonly number[];
  /** Hidden width of one expert, per layer (`expert_feed_forward_length`). */
  readonly layerExpertDims: readonly number[];
  /** Hidden width of the shared expert (`expert_shared_feed_forward_length`, default n_ff); 0 without one. */
  readonly sharedDim: number;
  /** Multiplier of the routing weights after normalisation (1 = none). */
  readonly weightsScale: number;
  /** Which layers route to experts ([nLayers]; the others have a dense FFN: ernie4_5-moe's leading layers). */
  readonly layerIsMoe: readonly boolean[];
}

function invalid(message: string, key: string, value: number): LlmError {
  return new LlmError('gguf-invalid', `reading model config: ${message}; the model file is corrupt or hostile`, {
    details: { key, value },
  });
}

/**
 * llama.cpp reads `expert_group_count` / `expert_group_used_count` for every architecture (`load_hparams`) and, with
 * more than one group, `build_moe_ffn` first keeps the `expert_group_used_count` groups whose two best experts score
 * highest: grouped selection, which this runtime does not compute. Such a file is `unsupported-arch` naming the key
 * (it was routed over all experts, silently unlike llama.cpp); a group count of at least `expert_count` is
 * `gguf-invalid` (llama.cpp asserts n_expert_groups < n_expert). 0 and 1 are plain top-k.
 */
function checkExpertGroups(r: MetadataReader, arch: string, nExperts: number): void {
  const key = r.archKey('expert_group_count');
  const groups = r.count(key, 0);
  if (groups <= 1) return;
  if (groups >= nExperts) {
    throw invalid(`'${key}' = ${groups} groups is not fewer than the ${nExperts} experts`, key, groups);
  }
  throw new LlmError(
    'unsupported-arch',
    `reading model config: '${key}' = ${groups}: grouped expert selection is not supported`,
    { details: { arch, key, value: groups } },
  );
}

/**
 * The MoE config of a file, or null for a dense one. `routing` is null for architectures without experts: a file
 * that declares experts for one of them is `unsupported-arch` (llama.cpp would ignore the experts and fail on the
 * missing dense FFN tensors). A MoE architecture without `expert_count` / `expert_used_count`, or with more experts
 * used than exist, is `gguf-invalid` naming the key.
 */
export function readMoeConfig(
  r: MetadataReader,
  arch: string,
  routing: MoeRouting | null,
  nLayers: number,
  layerFfnDims: readonly number[],
): MoeConfig | null {
  const countKey = r.archKey('expert_count');
  const usedKey = r.archKey('expert_used_count');
  const nExperts = r.boundedCount(countKey, 0, 0, L.maxExperts, 'maxExperts');
  if (routing === null) {
    if (nExperts === 0) return null;
    throw new LlmError(
      'unsupported-arch',
      `reading model config: this ${arch} model declares a mixture of ${nExperts} experts ('${countKey}'), which ${arch} does not have in llama.cpp`,
      { details: { arch, experts: nExperts, key: countKey } },
    );
  }
  if (nExperts === 0) throw invalid(`'${countKey}' is missing or 0, but ${arch} is a mixture of experts`, countKey, 0);
  checkExpertGroups(r, arch, nExperts);
  const layerUsed = r.boundedCounts(usedKey, 0, nLayers, 0, L.maxExperts, 'maxExperts');
  for (let il = 0; il < nLayers; il++) {
    const used = layerUsed[il];
    if (used === 0)
      throw invalid(`'${usedKey}' is missing or 0, but ${arch} routes every token to experts`, usedKey, 0);
    if (used > nExperts) {
      throw invalid(`'${usedKey}' = ${used} experts per token is more than '${countKey}' = ${nExperts}`, usedKey, used);
    }
  }
  const expertKey = r.archKey('expert_feed_forward_length');
  const layerExpertDims =
    routing.expertWidthKey === 'feed_forward_length'
      ? [...layerFfnDims]
      : r.has(expertKey)
        ? r.boundedCounts(expertKey, undefined, nLayers, 1, L.maxFeedForward, 'maxFeedForward')
        : layerFfnDims.map((ff, il) => Math.floor(ff / layerUsed[il]));
  if (layerExpertDims.some((d) => d < 1)) {
    throw invalid(`'${expertKey}' is absent and n_ff / n_expert_used is 0`, expertKey, 0);
  }
  const sharedKey = r.archKey('expert_shared_feed_forward_length');
  const sharedDim =
    routing.shared === 'none'
      ? 0
      : r.boundedCount(sharedKey, Math.max(...layerFfnDims), 1, L.maxFeedForward, 'maxFeedForward');
  return {
    ...routing,
    nExperts,
    layerUsed,
    layerExpertDims,
    sharedDim,
    weightsScale: 1,
    layerIsMoe: new Array<boolean>(nLayers).fill(true),
  };
}
