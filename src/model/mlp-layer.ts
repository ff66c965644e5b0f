/**
 * The MLP-only block of nemotron_h: no token mixer, x += ffn_down(relu²(ffn_up(norm(x)))) with the block's one norm
 * (`attn_norm`), as llama.cpp's `build_ffn_layer` (LLM_FFN_RELU_SQR, no gate); in nemotron_h_moe the block's FFN is
 * instead the ungated relu² experts plus the shared expert (`Ops.moeFfn` over the same norm). Its weights, names,
 * plan and step.
 */

import type { MoeStep } from '../backend/moe-step.js';
import type { Activation, Ops, Projection, ResidualOptions, RmsNormWeight, Weight } from '../backend/ops.js';
import { layerTensorName, type TensorNames } from './arch/index.js';
import type { MoeWeights } from './model-weights.js';
import { type MoeSlots, moeWeights } from './moe-load.js';
import type { WeightLoader, WeightSlot } from './weight-loader.js';

/** Weights of an MLP-only block; the shared FFN fields say "no gated FFN" (gate and the FFN norm are null). */
export interface MlpLayerWeights {
  readonly kind: 'mlp';
  readonly attnNorm: Weight; // [nEmbd]
  readonly up: Weight | null; // [ffnDim rows, nEmbd]; null with experts
  readonly down: Weight | null; // [nEmbd rows, ffnDim]; null with experts
  readonly ffnNorm: null;
  readonly gate: null;
  readonly moe: MoeWeights | null;
  readonly postFfnNorm: null;
}

/** The MLP block's weights, named (and shape-checked) before any is read. */
export interface MlpSlots {
  readonly attnNorm: WeightSlot;
  readonly up: WeightSlot | null;
  readonly down: WeightSlot | null;
  readonly moe: MoeSlots | null;
}

/** Names the weights of MLP layer `il`: ffn_up / ffn_down, or the experts' `moe` slots instead. */
export function mlpSlots(
  loader: WeightLoader,
  names: TensorNames,
  il: number,
  E: number,
  ffnDim: number,
  moe: MoeSlots | null,
): MlpSlots {
  const n = (pattern: string): string => layerTensorName(pattern, il);
  return {
    attnNorm: loader.upload(n(names.attnNorm), [E]),
    up: moe ? null : loader.upload(n(names.ffnUp), [E, ffnDim]),
    down: moe ? null : loader.upload(n(names.ffnDown), [ffnDim, E]),
    moe,
  };
}

/** The uploaded weights of an MLP layer's slots. */
export function mlpWeights(s: MlpSlots): MlpLayerWeights {
  return {
    kind: 'mlp',
    attnNorm: s.attnNorm.get(),
    up: s.up?.get() ?? null,
    down: s.down?.get() ?? null,
    ffnNorm: null,
    gate: null,
    moe: s.moe && moeWeights(s.moe),
    postFfnNorm: null,
  };
}

/** The MLP block's plan (built once at load). */
export interface MlpPlan {
  readonly attnNorm: RmsNormWeight;
  /** ffn_up of the normalised input → hidden (empty with experts). */
  readonly upProj: readonly Projection[];
  readonly hidden: Activation; // [ubatch, ffnDim]
  readonly downWeight: Weight | null;
  /** ffn_down → x. */
  readonly mlpOut: ResidualOptions;
}

/** The plan of an MLP layer over its hidden buffer. */
export function planMlp(w: MlpLayerWeights, eps: number, hidden: Activation, out: ResidualOptions): MlpPlan {
  return {
    attnNorm: { weight: w.attnNorm, eps },
    upProj: w.up ? [{ out: hidden, weight: w.up, bias: null }] : [],
    hidden,
    downWeight: w.down,
    mlpOut: out,
  };
}

/** The MLP block: x += relu²(norm(x) · upᵀ) · downᵀ; with experts x += moeFfn(norm(x)). */
export function mlpBlock(
  ops: Ops,
  p: MlpPlan & { readonly moe: MoeStep | null },
  n: number,
  x: Activation,
  xb: Activation,
): void {
  if (p.moe) return ops.moeFfn(x, p.attnNorm, p.moe, n); // x [n, nEmbd] += Σ_k w_k · expert_k(norm(x)) + shared
  if (!p.downWeight) throw new Error('mlp block without ffn_down or experts');
  ops.normMatmul(xb, x, p.attnNorm, p.upProj, n); // hidden [n, ffnDim]
  ops.reluSquared(p.hidden, n);
  ops.matmulResidual(x, p.hidden, p.downWeight, n, p.mlpOut); // x [n, nEmbd] += hidden · downᵀ
}
