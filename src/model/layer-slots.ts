import { layerTensorName, type TensorNames } from './arch/index.js';
import type { ModelConfig } from './config.js';
import type { DeltaNetLayerWeights } from './delta-net-layer.js';
import type { DeltaNetLayerSpec, MoeLayerSpec } from './layer-spec.js';
import type { Mamba2MixerSlots, Mamba2SsmSlots } from './mamba2-layer.js';
import type { MlpSlots } from './mlp-layer.js';
import type { DenseFfnWeights, LayerWeights, MoeWeights } from './model-weights.js';
import type { WeightLoader, WeightSlot } from './weight-loader.js';

/** A layer's weights named before any is read: every attention weight, or a short-convolution layer's. */
export type LayerSlots =
  | ({ readonly kind: 'attention'; readonly moe: MoeSlots | null } & {
      readonly [K in Exclude<keyof LayerWeights, 'moe' | 'perLayer' | 'outScale' | 'ssm'>]:
        | WeightSlot
        | (null extends LayerWeights[K] ? null : never);
    } & {
      readonly perLayer: { readonly gate: WeightSlot; readonly proj: WeightSlot; readonly postNorm: WeightSlot } | null;
      readonly outScale: number;
      readonly ssm: Mamba2SsmSlots | null;
    })
  | {
      readonly kind: 'shortconv';
      readonly attnNorm: WeightSlot;
      readonly inProj: WeightSlot;
      readonly conv: WeightSlot;
      readonly outProj: WeightSlot;
      readonly ffnNorm: WeightSlot;
      readonly gate: WeightSlot;
      readonly up: WeightSlot;
      readonly down: WeightSlot;
    }
  | ({ readonly kind: 'deltanet' } & {
      readonly [K in Exclude<keyof DeltaNetLayerWeights, 'kind' | 'postFfnNorm'>]: WeightSlot;
    })
  | {
      readonly kind: 'mamba2';
      readonly mixer: Mamba2MixerSlots;
      readonly dense: DenseFfnSlots | null;
      readonly moe: MoeSlots | null;
    }
  | ({ readonly kind: 'mlp' } & MlpSlots);

/** A layer's dense gated FFN, named before it is read. */
export type DenseFfnSlots = { readonly [K in keyof DenseFfnWeights]: WeightSlot };

/** A MoE layer's router, expert stacks and shared expert, named before they are read. */
export interface MoeSlots {
  readonly router: WeightSlot;
  readonly gate: WeightSlot;
  readonly up: WeightSlot;
  readonly down: WeightSlot;
  readonly selectionBias: WeightSlot | null;
  readonly routerBias: WeightSlot | null;
  readonly expertBias: { readonly gate: WeightSlot; readonly up: WeightSlot; readonly down: WeightSlot } | null;
  readonly shared: (DenseFfnSlots & { readonly gateInp: WeightSlot | null }) | null;
}

/** The dense gated FFN of layer `il` (phi3's fused gate|up split by rows). */
export function denseFfnSlots(
  loader: WeightLoader,
  names: TensorNames,
  c: ModelConfig,
  il: number,
  ffnDim: number,
): DenseFfnSlots {
  const n = (pattern: string): string => layerTensorName(pattern, il);
  const [gate, up] = c.fusedGateUp
    ? loader.uploadSplit(n(names.ffnUp), c.embeddingLength, [
        [n(names.ffnGate), ffnDim],
        [n(names.ffnUp), ffnDim],
      ])
    : [
        loader.upload(n(names.ffnGate), [c.embeddingLength, ffnDim]),
        loader.upload(n(names.ffnUp), [c.embeddingLength, ffnDim]),
      ];
  return { gate: gate!, up: up!, down: loader.upload(n(names.ffnDown), [ffnDim, c.embeddingLength]) };
}

/** The router, the 3-D expert stacks (one weight each) and the shared expert of MoE layer `il`. */
export function moeSlots(
  loader: WeightLoader,
  names: TensorNames,
  c: ModelConfig,
  il: number,
  m: MoeLayerSpec,
  sharedDim: number,
): MoeSlots {
  const n = (pattern: string): string => layerTensorName(pattern, il);
  const e = c.embeddingLength;
  return {
    router: loader.upload(n(names.ffnGateInp), [e, m.nExperts]),
    gate: loader.upload(n(names.ffnGateExps), [e, m.expertDim, m.nExperts]),
    up: loader.upload(n(names.ffnUpExps), [e, m.expertDim, m.nExperts]),
    down: loader.upload(n(names.ffnDownExps), [m.expertDim, e, m.nExperts]),
    selectionBias: loader.optional(n(names.ffnExpProbsB), [m.nExperts]),
    routerBias: c.moe?.oai ? loader.upload(n(names.ffnGateInpBias), [m.nExperts]) : null,
    expertBias: c.moe?.oai
      ? {
          gate: loader.uploadVector(n(names.ffnGateExpsBias), [m.expertDim, m.nExperts]),
          up: loader.uploadVector(n(names.ffnUpExpsBias), [m.expertDim, m.nExperts]),
          down: loader.uploadVector(n(names.ffnDownExpsBias), [e, m.nExperts]),
        }
      : null,
    shared:
      m.shared === 'none'
        ? null
        : {
            gate: loader.upload(n(names.ffnGateShexp), [e, sharedDim]),
            up: loader.upload(n(names.ffnUpShexp), [e, sharedDim]),
            down: loader.upload(n(names.ffnDownShexp), [sharedDim, e]),
            gateInp: m.shared === 'gated' ? loader.upload(n(names.ffnGateInpShexp), [e]) : null,
          },
  };
}

/** The uploaded weights of a MoE layer's slots. */
export function moeWeights(m: MoeSlots): MoeWeights {
  const s = m.shared;
  return {
    router: m.router.get(),
    gate: m.gate.get(),
    up: m.up.get(),
    down: m.down.get(),
    selectionBias: m.selectionBias?.get() ?? null,
    routerBias: m.routerBias?.get() ?? null,
    expertBias: m.expertBias && {
      gate: m.expertBias.gate.get(),
      up: m.expertBias.up.get(),
      down: m.expertBias.down.get(),
    },
    shared: s && { gate: s.gate.get(), up: s.up.get(), down: s.down.get(), gateInp: s.gateInp?.get() ?? null },
  };
}

/** Names (and shape-checks) the weights of a gated DeltaNet layer (qwen35), as llama.cpp's `load_block_trunk`. */
export function deltaNetSlots(
  loader: WeightLoader,
  names: TensorNames,
  il: number,
  E: number,
  spec: DeltaNetLayerSpec,
): LayerSlots {
  const n = (pattern: string): string => layerTensorName(pattern, il);
  const d = spec.dims;
  const vCols = d.nVHeads * d.headV;
  const convDim = 2 * d.nKHeads * d.headK + vCols;
  return {
    kind: 'deltanet',
    attnNorm: loader.upload(n(names.attnNorm), [E]),
    qkv: loader.upload(n(names.attnQkv), [E, convDim]),
    z: loader.upload(n(names.ssmGate), [E, vCols]),
    beta: loader.upload(n(names.ssmBeta), [E, d.nVHeads]),
    alpha: loader.upload(n(names.ssmAlpha), [E, d.nVHeads]),
    conv: loader.upload(n(names.ssmConv1d), [d.convWidth, convDim]),
    dtBias: loader.upload(n(names.ssmDt), [d.nVHeads]),
    a: loader.upload(n(names.ssmA), [d.nVHeads]),
    norm: loader.upload(n(names.ssmNorm), [d.headV]),
    outProj: loader.upload(n(names.ssmOut), [vCols, E]),
    ffnNorm: loader.upload(n(names.ffnNorm), [E]),
    gate: loader.upload(n(names.ffnGate), [E, spec.ffnDim]),
    up: loader.upload(n(names.ffnUp), [E, spec.ffnDim]),
    down: loader.upload(n(names.ffnDown), [spec.ffnDim, E]),
  };
}

/** The uploaded weights of a DeltaNet layer's slots. */
export function deltaNetWeights(l: Extract<LayerSlots, { kind: 'deltanet' }>): DeltaNetLayerWeights {
  return {
    kind: 'deltanet',
    attnNorm: l.attnNorm.get(),
    qkv: l.qkv.get(),
    z: l.z.get(),
    beta: l.beta.get(),
    alpha: l.alpha.get(),
    conv: l.conv.get(),
    dtBias: l.dtBias.get(),
    a: l.a.get(),
    norm: l.norm.get(),
    outProj: l.outProj.get(),
    ffnNorm: l.ffnNorm.get(),
    gate: l.gate.get(),
    up: l.up.get(),
    down: l.down.get(),
    postFfnNorm: null,
  };
}
