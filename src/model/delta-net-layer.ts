/**
 * The gated DeltaNet block of the forward pass (qwen35): its weights, its plan (built once at load) and its step,
 * x += ssm_out(deltaNet(norm(x))). The FFN that follows is the shared gated FFN of every layer kind.
 */

import type { Activation, Ops, Projection, RmsNormWeight, Weight } from '../backend/ops.js';
import type { DeltaNetInputs, DeltaNetWeights } from '../backend/delta-net-types.js';
import type { DeltaNetLayerSpec } from './layer-spec.js';
import type { MoeWeights } from './model-weights.js';
import { widthKey } from './run-shape.js';

/** Weights of a gated DeltaNet block; its FFN weights are those of an attention block. */
export interface DeltaNetLayerWeights {
  readonly kind: 'deltanet';
  readonly attnNorm: Weight; // [nEmbd]
  readonly qkv: Weight; // [2·nKHeads·headK + nVHeads·headV rows, nEmbd] attn_qkv
  readonly z: Weight; // [nVHeads·headV rows, nEmbd] attn_gate
  readonly beta: Weight; // [nVHeads rows, nEmbd]
  readonly alpha: Weight; // [nVHeads rows, nEmbd]
  readonly conv: Weight; // [convDim rows, convWidth]
  readonly dtBias: Weight; // [nVHeads]
  readonly a: Weight; // [nVHeads]
  readonly norm: Weight; // [headV]
  readonly outProj: Weight; // [nEmbd rows, nVHeads·headV] ssm_out
  readonly ffnNorm: Weight; // [nEmbd] (post_attention_norm)
  /** The dense gated FFN (null on a mixture-of-experts layer, which has `moe`; qwen35moe). */
  readonly gate: Weight | null; // [ffnDim rows, nEmbd]
  readonly up: Weight | null; // [ffnDim rows, nEmbd]
  readonly down: Weight | null; // [nEmbd rows, ffnDim]
  readonly moe: MoeWeights | null;
  readonly postFfnNorm: null;
}

/** The token-mixer part of a DeltaNet layer's plan. */
export interface DeltaNetMixerPlan {
  readonly attnNorm: RmsNormWeight;
  /** attn_qkv, attn_gate, ssm_beta, ssm_alpha of the normalised input. */
  readonly proj: readonly Projection[];
  readonly inputs: DeltaNetInputs;
  readonly small: DeltaNetWeights;
  readonly out: Activation; // [ubatch, nVHeads·headV] before ssm_out
  readonly outProj: Weight;
}

/** The mixer plan of a DeltaNet layer over the activations `get` finds by width key. */
export function planDeltaNet(
  spec: DeltaNetLayerSpec,
  w: DeltaNetLayerWeights,
  eps: number,
  get: (key: string) => Activation,
): DeltaNetMixerPlan {
  const d = spec.dims;
  const vCols = d.nVHeads * d.headV;
  const inputs: DeltaNetInputs = {
    mixed: get(widthKey('dn_mixed', 2 * d.nKHeads * d.headK + vCols)),
    z: get(widthKey('dn_z', vCols)),
    beta: get(widthKey('dn_beta', d.nVHeads)),
    alpha: get(widthKey('dn_alpha', d.nVHeads)),
    conv: get(widthKey('dn_conv', 2 * d.nKHeads * d.headK + vCols)),
  };
  return {
    attnNorm: { weight: w.attnNorm, eps },
    proj: [
      { out: inputs.mixed, weight: w.qkv, bias: null },
      { out: inputs.z, weight: w.z, bias: null },
      { out: inputs.beta, weight: w.beta, bias: null },
      { out: inputs.alpha, weight: w.alpha, bias: null },
    ],
    inputs,
    small: { dims: d, conv: w.conv, dtBias: w.dtBias, a: w.a, norm: w.norm },
    out: get(widthKey('dn_out', vCols)),
    outProj: w.outProj,
  };
}

/** The DeltaNet sub-block of layer il: x += ssm_out(deltaNet(norm(x))), the layer's state advanced past n tokens. */
export function deltaNetBlock(
  ops: Ops,
  p: DeltaNetMixerPlan,
  il: number,
  n: number,
  x: Activation,
  xb: Activation,
  eps: number,
  residual: Parameters<Ops['matmulResidual']>[4],
): void {
  ops.normMatmul(xb, x, p.attnNorm, p.proj, n); // mixed [n, convDim], z [n, vCols], beta/alpha [n, nVHeads]
  ops.deltaNet(p.out, p.inputs, il, n, p.small, eps); // out [n, vCols]
  ops.matmulResidual(x, p.out, p.outProj, n, residual); // x [n, nEmbd] += out · ssm_outᵀ
}
