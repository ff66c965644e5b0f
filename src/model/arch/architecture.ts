/**
 * The shape of one architecture entry (one file per `general.architecture` value, listed in `arch/index.ts`) and
 * the GGUF tensor names llama.cpp uses for every architecture here (`llm_tensor` names in llama-arch.cpp).
 */

import type { GgufValue } from '../../gguf/types.js';
import type { ArchOptions, ModelConfig } from '../config.js';
import type { EncoderOptions } from '../encoder-weights.js';

/** GGUF tensor names; `{i}` stands for the layer index. */
export interface TensorNames {
  readonly tokenEmbd: string;
  readonly outputNorm: string;
  /** Absent in tied models: the lm head is then `tokenEmbd`. */
  readonly output: string;
  readonly outputBias: string;
  /** llama3-style per-dimension rope frequency divisors (optional). */
  readonly ropeFreqs: string;
  /** LongRoPE factors (phi3 128k; optional): short for contexts within the original one, long beyond. */
  readonly ropeFactorsShort: string;
  readonly ropeFactorsLong: string;
  readonly attnNorm: string;
  readonly attnQ: string;
  readonly attnK: string;
  readonly attnV: string;
  /** Fused Q|K|V rows (phi3). */
  readonly attnQkv: string;
  readonly attnQBias: string;
  readonly attnKBias: string;
  readonly attnVBias: string;
  readonly attnQNorm: string;
  readonly attnKNorm: string;
  readonly attnOut: string;
  readonly attnOutBias: string;
  readonly postAttnNorm: string;
  readonly ffnNorm: string;
  readonly ffnGate: string;
  /** Up projection; gate|up fused (2·n_ff rows) when `fusedGateUp`. */
  readonly ffnUp: string;
  readonly ffnDown: string;
  readonly postFfnNorm: string;
  /** Mixture of experts: the router [n_embd, n_expert] and the 3-D expert stacks [cols, rows, n_expert]. */
  readonly ffnGateInp: string;
  readonly ffnGateExps: string;
  readonly ffnUpExps: string;
  readonly ffnDownExps: string;
  /** The shared expert and its sigmoid gate [n_embd] (qwen2moe). */
  readonly ffnGateShexp: string;
  readonly ffnUpShexp: string;
  readonly ffnDownShexp: string;
  readonly ffnGateInpShexp: string;
  /** gpt-oss: router bias [n_expert], expert biases [rows, n_expert], attention sinks [n_head]. */
  readonly ffnGateInpBias: string;
  readonly ffnGateExpsBias: string;
  readonly ffnUpExpsBias: string;
  readonly ffnDownExpsBias: string;
  readonly attnSinks: string;
  /** Per-expert bias added to the router probabilities for selection only (ernie4_5-moe; optional). */
  readonly ffnExpProbsB: string;
  /** Gate and up expert stacks fused per expert [n_embd, 2·n_ff_exp, n_expert] (gemma4, qwen35moe files may have it). */
  readonly ffnGateUpExps: string;
  /** Per-expert output scale [n_expert] (gemma4; optional). */
  readonly ffnDownExpsScale: string;
  /** gemma4 MoE: the router's input scale [n_embd] and the branch norms (see `MoeRouting.branchNorms`). */
  readonly ffnGateInpScale: string;
  readonly ffnPreNorm2: string;
  readonly ffnPostNorm1: string;
  readonly ffnPostNorm2: string;
  /** Short-convolution layers (lfm2): depthwise taps [l_cache, n_embd], B|C|x input and output projections. */
  readonly shortConv: string;
  readonly shortConvInProj: string;
  readonly shortConvOutProj: string;
  /** Per-layer token embeddings (gemma4): [nPL·nLayers, vocab], the projection [nEmbd, nPL·nLayers] and its norm. */
  readonly perLayerTokenEmbd: string;
  readonly perLayerModelProj: string;
  readonly perLayerProjNorm: string;
  /** Per layer: gate [nEmbd, nPL], projection back [nPL, nEmbd], its post-norm [nEmbd]. */
  readonly perLayerInpGate: string;
  readonly perLayerProj: string;
  readonly perLayerPostNorm: string;
  /** Scalar multiplier of a layer's output ([1]). */
  readonly layerOutScale: string;
  /** Gated DeltaNet (qwen35): output gate z, conv1d kernel, dt bias, decay a, beta and alpha projections, norm, out. */
  readonly ssmGate: string;
  readonly ssmConv1d: string;
  readonly ssmDt: string;
  readonly ssmA: string;
  readonly ssmBeta: string;
  readonly ssmAlpha: string;
  readonly ssmNorm: string;
  readonly ssmOut: string;
  /** Mamba-2 (granitehybrid): in projection z | xBC | dt, conv1d bias (optional), D skip [1, nHeads]. */
  readonly ssmIn: string;
  readonly ssmConv1dBias: string;
  readonly ssmD: string;
}

/** llama.cpp's names, shared by every architecture in the registry. */
export const LLAMA_CPP_TENSOR_NAMES: TensorNames = {
  tokenEmbd: 'token_embd.weight',
  outputNorm: 'output_norm.weight',
  output: 'output.weight',
  outputBias: 'output.bias',
  ropeFreqs: 'rope_freqs.weight',
  ropeFactorsShort: 'rope_factors_short.weight',
  ropeFactorsLong: 'rope_factors_long.weight',
  attnNorm: 'blk.{i}.attn_norm.weight',
  attnQ: 'blk.{i}.attn_q.weight',
  attnK: 'blk.{i}.attn_k.weight',
  attnV: 'blk.{i}.attn_v.weight',
  attnQkv: 'blk.{i}.attn_qkv.weight',
  attnQBias: 'blk.{i}.attn_q.bias',
  attnKBias: 'blk.{i}.attn_k.bias',
  attnVBias: 'blk.{i}.attn_v.bias',
  attnQNorm: 'blk.{i}.attn_q_norm.weight',
  attnKNorm: 'blk.{i}.attn_k_norm.weight',
  attnOut: 'blk.{i}.attn_output.weight',
  attnOutBias: 'blk.{i}.attn_output.bias',
  postAttnNorm: 'blk.{i}.post_attention_norm.weight',
  ffnNorm: 'blk.{i}.ffn_norm.weight',
  ffnGate: 'blk.{i}.ffn_gate.weight',
  ffnUp: 'blk.{i}.ffn_up.weight',
  ffnDown: 'blk.{i}.ffn_down.weight',
  postFfnNorm: 'blk.{i}.post_ffw_norm.weight',
  ffnGateInp: 'blk.{i}.ffn_gate_inp.weight',
  ffnGateExps: 'blk.{i}.ffn_gate_exps.weight',
  ffnUpExps: 'blk.{i}.ffn_up_exps.weight',
  ffnDownExps: 'blk.{i}.ffn_down_exps.weight',
  ffnGateShexp: 'blk.{i}.ffn_gate_shexp.weight',
  ffnUpShexp: 'blk.{i}.ffn_up_shexp.weight',
  ffnDownShexp: 'blk.{i}.ffn_down_shexp.weight',
  ffnGateInpShexp: 'blk.{i}.ffn_gate_inp_shexp.weight',
  ffnExpProbsB: 'blk.{i}.exp_probs_b.bias',
  ffnGateInpBias: 'blk.{i}.ffn_gate_inp.bias',
  ffnGateExpsBias: 'blk.{i}.ffn_gate_exps.bias',
  ffnUpExpsBias: 'blk.{i}.ffn_up_exps.bias',
  ffnDownExpsBias: 'blk.{i}.ffn_down_exps.bias',
  attnSinks: 'blk.{i}.attn_sinks.weight',
  ffnDownExpsScale: 'blk.{i}.ffn_down_exps.scale',
  ffnGateUpExps: 'blk.{i}.ffn_gate_up_exps.weight',
  ffnGateInpScale: 'blk.{i}.ffn_gate_inp.scale',
  ffnPreNorm2: 'blk.{i}.pre_ffw_norm_2.weight',
  ffnPostNorm1: 'blk.{i}.post_ffw_norm_1.weight',
  ffnPostNorm2: 'blk.{i}.post_ffw_norm_2.weight',
  shortConv: 'blk.{i}.shortconv.conv.weight',
  shortConvInProj: 'blk.{i}.shortconv.in_proj.weight',
  shortConvOutProj: 'blk.{i}.shortconv.out_proj.weight',
  perLayerTokenEmbd: 'per_layer_token_embd.weight',
  perLayerModelProj: 'per_layer_model_proj.weight',
  perLayerProjNorm: 'per_layer_proj_norm.weight',
  perLayerInpGate: 'blk.{i}.inp_gate.weight',
  perLayerProj: 'blk.{i}.proj.weight',
  perLayerPostNorm: 'blk.{i}.post_norm.weight',
  layerOutScale: 'blk.{i}.layer_output_scale.weight',
  ssmGate: 'blk.{i}.attn_gate.weight',
  ssmConv1d: 'blk.{i}.ssm_conv1d.weight',
  ssmDt: 'blk.{i}.ssm_dt.bias',
  ssmA: 'blk.{i}.ssm_a',
  ssmBeta: 'blk.{i}.ssm_beta.weight',
  ssmAlpha: 'blk.{i}.ssm_alpha.weight',
  ssmNorm: 'blk.{i}.ssm_norm.weight',
  ssmOut: 'blk.{i}.ssm_out.weight',
  ssmIn: 'blk.{i}.ssm_in.weight',
  ssmConv1dBias: 'blk.{i}.ssm_conv1d.bias',
  ssmD: 'blk.{i}.ssm_d',
};

/** A tensor name of layer `layer`. */
export function layerTensorName(pattern: string, layer: number): string {
  return pattern.replace('{i}', String(layer));
}

/** One supported architecture. */
export interface Architecture {
  /** The value of `general.architecture`. */
  readonly name: string;
  /** Hyper-parameters from metadata, with llama.cpp's defaults for this architecture. */
  config(meta: Readonly<Record<string, GgufValue>>): ModelConfig;
  readonly tensors: TensorNames;
  readonly options: ArchOptions;
  /**
   * An encoder (bert family, llama.cpp `src/models/bert.cpp`): post-norm LayerNorm blocks, no lm head, run by
   * `model/encoder.ts` for embeddings only. Absent for decoders.
   */
  readonly encoder?: EncoderOptions;
}
