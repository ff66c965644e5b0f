/**
 * The Mamba-2 block of the forward pass (granitehybrid): its weights, their names and shapes as llama.cpp's
 * `load_arch_tensors` gives them, its plan (built once at load) and its step, x += ssm_out(mamba2(norm(x))). The FFN
 * that follows is the shared FFN of every layer kind (dense gated, or a mixture of experts).
 */

import { type Mamba2Dims, type Mamba2Inputs, type Mamba2Weights, mamba2Widths } from '../backend/mamba2.js';
import type { Activation, Ops, Projection, RmsNormWeight, Weight } from '../backend/ops.js';
import { layerTensorName, type TensorNames } from './arch/index.js';
import type { Mamba2LayerSpec } from './layer-spec.js';
import type { MoeWeights } from './model-weights.js';
import { widthKey } from './run-shape.js';
import type { WeightLoader, WeightSlot } from './weight-loader.js';

/** Weights of a Mamba-2 block and its FFN (dense gated, or experts). */
export interface Mamba2LayerWeights {
  readonly kind: 'mamba2';
  readonly attnNorm: Weight; // [nEmbd]
  readonly inProj: Weight; // [2·dInner + 2·nGroups·dState + nHeads rows, nEmbd] ssm_in: z | xBC | dt
  readonly conv: Weight; // [dInner + 2·nGroups·dState rows, convWidth]
  readonly convBias: Weight | null; // [dInner + 2·nGroups·dState]
  readonly dtBias: Weight; // [nHeads]
  readonly a: Weight; // [nHeads]
  readonly d: Weight; // [nHeads]
  readonly norm: Weight | null; // [dInner] (optional in falcon-h1)
  readonly outProj: Weight; // [nEmbd rows, dInner] ssm_out
  readonly ffnNorm: Weight | null; // [nEmbd] (null: no FFN after the mixer, nemotron_h)
  /** The dense gated FFN (null on a mixture-of-experts layer, which has `moe`). */
  readonly gate: Weight | null; // [ffnDim rows, nEmbd]
  readonly up: Weight | null; // [ffnDim rows, nEmbd]
  readonly down: Weight | null; // [nEmbd rows, ffnDim]
  readonly moe: MoeWeights | null;
  readonly postFfnNorm: null;
}

/** The Mamba-2 mixer's own weights (a falcon-h1 attention layer runs one beside its attention). */
export type Mamba2SsmWeights = Pick<
  Mamba2LayerWeights,
  'inProj' | 'conv' | 'convBias' | 'dtBias' | 'a' | 'd' | 'norm' | 'outProj'
>;

/** `Mamba2SsmWeights` named before any is read. */
export type Mamba2SsmSlots = {
  readonly [K in keyof Mamba2SsmWeights]: WeightSlot | (null extends Mamba2SsmWeights[K] ? null : never);
};

/** The mixer weights of a Mamba-2 layer, named (and shape-checked) before any is read. */
export type Mamba2MixerSlots = {
  readonly [K in Exclude<keyof Mamba2LayerWeights, 'kind' | 'gate' | 'up' | 'down' | 'moe' | 'postFfnNorm'>]:
    | WeightSlot
    | (null extends Mamba2LayerWeights[K] ? null : never);
};

/** Names the mixer weights (and the FFN norm) of Mamba-2 layer `il` with llama.cpp's shapes. */
export function mamba2Slots(
  loader: WeightLoader,
  names: TensorNames,
  il: number,
  E: number,
  spec: Mamba2LayerSpec,
): Mamba2MixerSlots {
  const n = (pattern: string): string => layerTensorName(pattern, il);
  return {
    attnNorm: loader.upload(n(names.attnNorm), [E]),
    ...mamba2SsmSlots(loader, names, il, E, spec.dims, false),
    ffnNorm: spec.ffnDim > 0 || spec.moe ? loader.upload(n(names.ffnNorm), [E]) : null,
  };
}

/** Names the Mamba-2 mixer's own weights of layer `il` (ssm_norm optional where `normOptional`, falcon-h1). */
export function mamba2SsmSlots(
  loader: WeightLoader,
  names: TensorNames,
  il: number,
  E: number,
  d: Mamba2Dims,
  normOptional: boolean,
): Mamba2SsmSlots {
  const n = (pattern: string): string => layerTensorName(pattern, il);
  const w = mamba2Widths(d);
  return {
    inProj: loader.upload(n(names.ssmIn), [E, w.proj]),
    conv: loader.upload(n(names.ssmConv1d), [d.convWidth, w.conv]),
    convBias: loader.optional(n(names.ssmConv1dBias), [w.conv]),
    dtBias: loader.upload(n(names.ssmDt), [d.nHeads]),
    a: loader.upload(n(names.ssmA), [1, d.nHeads]),
    d: loader.upload(n(names.ssmD), [1, d.nHeads]),
    norm: normOptional
      ? loader.optional(n(names.ssmNorm), [w.inner / d.nGroups, d.nGroups])
      : loader.upload(n(names.ssmNorm), [w.inner / d.nGroups, d.nGroups]),
    outProj: loader.upload(n(names.ssmOut), [w.inner, E]),
  };
}

/** The uploaded weights of `mamba2SsmSlots`. */
export function mamba2SsmWeights(s: Mamba2SsmSlots): Mamba2SsmWeights {
  return {
    inProj: s.inProj.get(),
    conv: s.conv.get(),
    convBias: s.convBias?.get() ?? null,
    dtBias: s.dtBias.get(),
    a: s.a.get(),
    d: s.d.get(),
    norm: s.norm?.get() ?? null,
    outProj: s.outProj.get(),
  };
}

/** The uploaded weights of a Mamba-2 layer: its mixer's slots and its FFN's weights. */
export function mamba2Weights(
  s: Mamba2MixerSlots,
  ffn: Pick<Mamba2LayerWeights, 'gate' | 'up' | 'down' | 'moe'>,
): Mamba2LayerWeights {
  return {
    kind: 'mamba2',
    attnNorm: s.attnNorm.get(),
    ...mamba2SsmWeights(s),
    ffnNorm: s.ffnNorm?.get() ?? null,
    ...ffn,
    postFfnNorm: null,
  };
}

/** The token-mixer part of a Mamba-2 layer's plan. */
export interface Mamba2MixerPlan {
  readonly attnNorm: RmsNormWeight;
  /** ssm_in of the normalised input. */
  readonly proj: readonly Projection[];
  readonly inputs: Mamba2Inputs;
  readonly small: Mamba2Weights;
  readonly out: Activation; // [ubatch, dInner] before ssm_out
  readonly outProj: Weight;
}

/** The activations a Mamba-2 layer of `dims` adds, as (label, width) pairs (see `activationShapes`). */
export function mamba2Activations(dims: Mamba2Dims): [string, number][] {
  const w = mamba2Widths(dims);
  return [
    ['m2_zxbcdt', w.proj],
    ['m2_conv', w.conv],
    ['m2_out', w.inner],
  ];
}

/** The mixer plan of a Mamba-2 layer over the activations `get` finds by width key. */
export function planMamba2(
  dims: Mamba2Dims,
  w: Mamba2SsmWeights & { readonly attnNorm: Weight },
  eps: number,
  get: (key: string) => Activation,
): Mamba2MixerPlan {
  const [[zl, zc], [cl, cc], [ol, oc]] = mamba2Activations(dims);
  const inputs: Mamba2Inputs = { zxbcdt: get(widthKey(zl, zc)), conv: get(widthKey(cl, cc)) };
  return {
    attnNorm: { weight: w.attnNorm, eps },
    proj: [{ out: inputs.zxbcdt, weight: w.inProj, bias: null }],
    inputs,
    small: { dims, conv: w.conv, convBias: w.convBias, dtBias: w.dtBias, a: w.a, d: w.d, norm: w.norm },
    out: get(widthKey(ol, oc)),
    outProj: w.outProj,
  };
}

/** The Mamba-2 sub-block of layer il: x += ssm_out(mamba2(norm(x))), the layer's state advanced past n tokens. */
export function mamba2Block(
  ops: Ops,
  p: Mamba2MixerPlan,
  il: number,
  n: number,
  x: Activation,
  xb: Activation,
  eps: number,
  residual: Parameters<Ops['matmulResidual']>[4],
): void {
  ops.normMatmul(xb, x, p.attnNorm, p.proj, n); // zxbcdt [n, 2·dInner + 2·nGroups·dState + nHeads]
  ops.mamba2(p.out, p.inputs, il, n, p.small, eps); // out [n, dInner]
  ops.matmulResidual(x, p.out, p.outProj, n, residual); // x [n, nEmbd] += scale · out · ssm_outᵀ
}
