import { layerTensorName, type TensorNames } from './arch/index.js';
import type { ModelConfig } from './config.js';
import type { DeltaNetLayerWeights } from './delta-net-layer.js';
import type { DeltaNetLayerSpec, LayerSpec } from './layer-spec.js';
import type { Mamba2MixerSlots, Mamba2SsmSlots } from './mamba2-layer.js';
import type { MlpSlots } from './mlp-layer.js';
import type { DenseFfnWeights, LayerWeights } from './model-weights.js';
import { type MoeSlots, moeSlots, moeWeights } from './moe-load.js';
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
  | ({
      readonly kind: 'shortconv';
      readonly attnNorm: WeightSlot;
      readonly inProj: WeightSlot;
      readonly conv: WeightSlot;
      readonly outProj: WeightSlot;
      readonly ffnNorm: WeightSlot;
    } & FfnSlots)
  | ({ readonly kind: 'deltanet' } & {
      readonly [K in Exclude<keyof DeltaNetLayerWeights, 'kind' | 'postFfnNorm' | keyof FfnSlots>]: WeightSlot;
    } & FfnSlots)
  | {
      readonly kind: 'mamba2';
      readonly mixer: Mamba2MixerSlots;
      readonly dense: DenseFfnSlots | null;
      readonly moe: MoeSlots | null;
    }
  | ({ readonly kind: 'mlp' } & MlpSlots);

/** A recurrent layer's FFN: dense, or the experts of a MoE layer (lfm2moe, qwen35moe). */
interface FfnSlots {
  readonly gate: WeightSlot | null;
  readonly up: WeightSlot | null;
  readonly down: WeightSlot | null;
  readonly moe: MoeSlots | null;
}

/** A layer's dense gated FFN, named before it is read. */
export type DenseFfnSlots = { readonly [K in keyof DenseFfnWeights]: WeightSlot };

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

/** Names (and shape-checks) the weights of a gated DeltaNet layer (qwen35), as llama.cpp's `load_block_trunk`. */
export function deltaNetSlots(
  loader: WeightLoader,
  names: TensorNames,
  il: number,
  E: number,
  spec: DeltaNetLayerSpec,
): Omit<Extract<LayerSlots, { kind: 'deltanet' }>, keyof FfnSlots> {
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
  };
}

/** The FFN of a recurrent layer: the dense gated FFN, or a MoE layer's router and experts. */
export function recurrentFfnSlots(
  loader: WeightLoader,
  names: TensorNames,
  c: ModelConfig,
  il: number,
  spec: Extract<LayerSpec, { kind: 'shortconv' | 'deltanet' }>,
): FfnSlots {
  if (spec.moe) return { gate: null, up: null, down: null, moe: moeSlots(loader, names, c, il, spec.moe, spec.ffnDim) };
  return { ...denseFfnSlots(loader, names, c, il, spec.ffnDim), moe: null };
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
    gate: l.gate?.get() ?? null,
    up: l.up?.get() ?? null,
    down: l.down?.get() ?? null,
    moe: l.moe && moeWeights(l.moe),
    postFfnNorm: null,
  };
}
