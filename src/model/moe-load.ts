/**
 * The weights of a mixture-of-experts FFN named before any is read (router, 3-D expert stacks, selection bias, the
 * shared expert, gemma4's branch norms and per-expert scale, gpt-oss's router and expert biases) and turned into `MoeWeights` once loaded.
 */

import { layerTensorName, type TensorNames } from './arch/index.js';
import type { ModelConfig } from './config.js';
import type { MoeLayerSpec } from './layer-spec.js';
import type { DenseFfnSlots } from './layer-slots.js';
import type { MoeWeights } from './model-weights.js';
import type { WeightLoader, WeightSlot } from './weight-loader.js';

/** A MoE layer's router, expert stacks and shared expert, named before they are read. */
export interface MoeSlots {
  readonly router: WeightSlot;
  readonly gate: WeightSlot;
  readonly up: WeightSlot;
  readonly down: WeightSlot;
  readonly selectionBias: WeightSlot | null;
  readonly expertScale: WeightSlot | null;
  readonly routerBias: WeightSlot | null;
  readonly expertBias: { readonly gate: WeightSlot; readonly up: WeightSlot; readonly down: WeightSlot } | null;
  readonly shared: (DenseFfnSlots & { readonly gateInp: WeightSlot | null }) | null;
  /** gemma4's branch norms (`MoeRouting.branchNorms`), or null. */
  readonly branch: { readonly [K in keyof NonNullable<MoeWeights['branch']>]: WeightSlot } | null;
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
  // A fused gate|up stack is one weight standing for both (the MoE step splits its product).
  const fused = m.fusedGateUp ? loader.upload(n(names.ffnGateUpExps), [e, 2 * m.expertDim, m.nExperts]) : null;
  // Ungated experts (nemotron_h_moe): the up stack stands in for the gate, unread (MoeStep.activation 'relu2').
  const up = fused ?? loader.upload(n(names.ffnUpExps), [e, m.expertDim, m.nExperts]);
  const sharedUp = m.shared === 'none' ? null : loader.upload(n(names.ffnUpShexp), [e, sharedDim]);
  return {
    router: loader.upload(n(names.ffnGateInp), [e, m.nExperts]),
    gate: fused ?? (m.ungated ? up : loader.upload(n(names.ffnGateExps), [e, m.expertDim, m.nExperts])),
    up,
    down: loader.upload(n(names.ffnDownExps), [m.expertDim, e, m.nExperts]),
    selectionBias: loader.optional(n(names.ffnExpProbsB), [m.nExperts]),
    // llama.cpp loads a per-expert output scale for any architecture when the file has one.
    expertScale: loader.optional(n(names.ffnDownExpsScale), [m.nExperts]),
    routerBias: c.moe?.oai ? loader.upload(n(names.ffnGateInpBias), [m.nExperts]) : null,
    expertBias: c.moe?.oai
      ? {
          gate: loader.uploadVector(n(names.ffnGateExpsBias), [m.expertDim, m.nExperts]),
          up: loader.uploadVector(n(names.ffnUpExpsBias), [m.expertDim, m.nExperts]),
          down: loader.uploadVector(n(names.ffnDownExpsBias), [e, m.nExperts]),
        }
      : null,
    shared:
      sharedUp === null
        ? null
        : {
            gate: m.ungated ? sharedUp : loader.upload(n(names.ffnGateShexp), [e, sharedDim]),
            up: sharedUp,
            down: loader.upload(n(names.ffnDownShexp), [sharedDim, e]),
            gateInp: m.shared === 'gated' ? loader.upload(n(names.ffnGateInpShexp), [e]) : null,
          },
    branch: m.branchNorms
      ? {
          routerNorm: loader.upload(n(names.ffnGateInpScale), [e]),
          expertsNorm: loader.upload(n(names.ffnPreNorm2), [e]),
          expertsPostNorm: loader.upload(n(names.ffnPostNorm2), [e]),
          sharedPostNorm: loader.upload(n(names.ffnPostNorm1), [e]),
        }
      : null,
  };
}

/** The uploaded weights of a MoE layer's slots. */
export function moeWeights(m: MoeSlots): MoeWeights {
  const s = m.shared;
  const b = m.branch;
  return {
    router: m.router.get(),
    gate: m.gate.get(),
    up: m.up.get(),
    down: m.down.get(),
    selectionBias: m.selectionBias?.get() ?? null,
    expertScale: m.expertScale?.get() ?? null,
    routerBias: m.routerBias?.get() ?? null,
    expertBias: m.expertBias && {
      gate: m.expertBias.gate.get(),
      up: m.expertBias.up.get(),
      down: m.expertBias.down.get(),
    },
    shared: s && { gate: s.gate.get(), up: s.up.get(), down: s.down.get(), gateInp: s.gateInp?.get() ?? null },
    branch: b && {
      routerNorm: b.routerNorm.get(),
      expertsNorm: b.expertsNorm.get(),
      expertsPostNorm: b.expertsPostNorm.get(),
      sharedPostNorm: b.sharedPostNorm.get(),
    },
  };
}
