/**
 * The layer plan as data: one `LayerSpec` per block, derived once from a `ModelConfig`, that the forward pass,
 * the weight loader and the memory sizing iterate. Every layer is an attention block whose FFN is dense or a mixture of experts
 * (`moe`); recurrent layers become new `kind`s here rather than special cases in the forward pass.
 */

import type { ModelConfig, YarnConfig } from './config.js';
import type { MoeRouting } from './moe-config.js';

/** Rotary embedding of one layer (sliding layers may have their own base, gemma3). */
interface LayerRope {
  /** Base frequency. */
  readonly theta: number;
  /** 1 / linear scaling factor. */
  readonly freqScale: number;
  /** YaRN parameters, or null. */
  readonly yarn: YarnConfig | null;
}

/** The mixture-of-experts FFN of one layer (llama.cpp `build_moe_ffn`). */
export interface MoeLayerSpec extends MoeRouting {
  readonly nExperts: number;
  /** Experts per token (top-k). */
  readonly nUsed: number;
  /** Hidden width of one expert. */
  readonly expertDim: number;
  /** Multiplier of the routing weights (1 = none). */
  readonly weightsScale: number;
}

/** One attention + gated-FFN block. */
interface AttentionLayerSpec {
  readonly kind: 'attention';
  readonly nHeads: number;
  readonly nKvHeads: number;
  /** Width of one head (keys, values and queries). */
  readonly headDim: number;
  /** Width of the dense gated FFN's hidden layer (of the shared expert on a MoE layer; 0 when it has none). */
  readonly ffnDim: number;
  /** The routed experts of the FFN, or null for a dense FFN. */
  readonly moe: MoeLayerSpec | null;
  /** Keys farther back than this many positions are masked; 0 = global attention. */
  readonly slidingWindow: number;
  /** Rotary embedding, or null for a NoPE layer (positions enter only through the causal mask). */
  readonly rope: LayerRope | null;
}

/** One block of the model; a union that grows with the layer kinds the runtime learns. */
export type LayerSpec = AttentionLayerSpec;

/** The per-layer records of `config`, layer 0 first. */
export function describeLayers(config: ModelConfig): LayerSpec[] {
  const c = config;
  return Array.from({ length: c.nLayers }, (_, il): LayerSpec => {
    const sliding = c.slidingWindow > 0 && c.slidingLayers[il] === true;
    const swaRope = sliding && c.ropeSwa !== null ? c.ropeSwa : null;
    const m = c.moe;
    const moe: MoeLayerSpec | null =
      m?.layerIsMoe[il] !== true
        ? null
        : {
            gating: m.gating,
            normWeights: m.normWeights,
            shared: m.shared,
            nExperts: m.nExperts,
            nUsed: m.layerUsed[il],
            expertDim: m.layerExpertDims[il],
            weightsScale: m.weightsScale,
          };
    return {
      kind: 'attention',
      nHeads: c.layerHeads[il] ?? c.nHeads,
      nKvHeads: c.nKvHeads,
      headDim: c.headDim,
      ffnDim: moe && m ? m.sharedDim : (c.layerFfnDims[il] ?? c.ffnDim),
      moe,
      slidingWindow: sliding ? c.slidingWindow : 0,
      rope: c.noRopeLayers[il]
        ? null
        : swaRope
          ? { theta: swaRope.theta, freqScale: swaRope.freqScale, yarn: null }
          : { theta: c.ropeTheta, freqScale: c.ropeFreqScale, yarn: c.ropeYarn },
    };
  });
}
