/**
 * The MLP-only block of nemotron_h: no token mixer, x += ffn_down(relu²(ffn_up(norm(x)))) with the block's one norm
 * (`attn_norm`), as llama.cpp's `build_ffn_layer` (LLM_FFN_RELU_SQR, no gate). Its weights, names, plan and step.
 */

import type { Activation, Ops, Projection, ResidualOptions, RmsNormWeight, Weight } from '../backend/ops.js';
import { layerTensorName, type TensorNames } from './arch/index.js';
import type { WeightLoader, WeightSlot } from './weight-loader.js';

/** Weights of an MLP-only block; the shared FFN fields say "no gated FFN" (gate and the FFN norm are null). */
export interface MlpLayerWeights {
  readonly kind: 'mlp';
  readonly attnNorm: Weight; // [nEmbd]
  readonly up: Weight; // [ffnDim rows, nEmbd]
  readonly down: Weight; // [nEmbd rows, ffnDim]
  readonly ffnNorm: null;
  readonly gate: null;
  readonly moe: null;
  readonly postFfnNorm: null;
}

/** The MLP block's weights, named (and shape-checked) before any is read. */
export interface MlpSlots {
  readonly attnNorm: WeightSlot;
  readonly up: WeightSlot;
  readonly down: WeightSlot;
}

/** Names the weights of MLP layer `il`. */
export function mlpSlots(loader: WeightLoader, names: TensorNames, il: number, E: number, ffnDim: number): MlpSlots {
  const n = (pattern: string): string => layerTensorName(pattern, il);
  return {
    attnNorm: loader.upload(n(names.attnNorm), [E]),
    up: loader.upload(n(names.ffnUp), [E, ffnDim]),
    down: loader.upload(n(names.ffnDown), [ffnDim, E]),
  };
}

/** The uploaded weights of an MLP layer's slots. */
export function mlpWeights(s: MlpSlots): MlpLayerWeights {
  return {
    kind: 'mlp',
    attnNorm: s.attnNorm.get(),
    up: s.up.get(),
    down: s.down.get(),
    ffnNorm: null,
    gate: null,
    moe: null,
    postFfnNorm: null,
  };
}

/** The MLP block's plan (built once at load). */
export interface MlpPlan {
  readonly attnNorm: RmsNormWeight;
  /** ffn_up of the normalised input → hidden. */
  readonly upProj: readonly Projection[];
  readonly hidden: Activation; // [ubatch, ffnDim]
  readonly downWeight: Weight;
  /** ffn_down → x. */
  readonly mlpOut: ResidualOptions;
}

/** The plan of an MLP layer over its hidden buffer. */
export function planMlp(w: MlpLayerWeights, eps: number, hidden: Activation, out: ResidualOptions): MlpPlan {
  return {
    attnNorm: { weight: w.attnNorm, eps },
    upProj: [{ out: hidden, weight: w.up, bias: null }],
    hidden,
    downWeight: w.down,
    mlpOut: out,
  };
}

/** The MLP block: x += relu²(norm(x) · upᵀ) · downᵀ. */
export function mlpBlock(ops: Ops, p: MlpPlan, n: number, x: Activation, xb: Activation): void {
  ops.normMatmul(xb, x, p.attnNorm, p.upProj, n); // hidden [n, ffnDim]
  ops.reluSquared(p.hidden, n);
  ops.matmulResidual(x, p.hidden, p.downWeight, n, p.mlpOut); // x [n, nEmbd] += hidden · downᵀ
}
