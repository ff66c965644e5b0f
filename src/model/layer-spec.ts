/**
 * The layer plan as data: one `LayerSpec` per block, derived once from a `ModelConfig`, that the forward pass,
 * the weight loader and the memory sizing iterate: attention blocks and short-convolution blocks (lfm2); further
 * recurrent and MoE layers become new `kind`s here rather than special cases in the forward pass.
 */

import type { ModelConfig, YarnConfig } from './config.js';

/** Rotary embedding of one layer (sliding layers may have their own base, gemma3). */
interface LayerRope {
  /** Base frequency. */
  readonly theta: number;
  /** 1 / linear scaling factor. */
  readonly freqScale: number;
  /** YaRN parameters, or null. */
  readonly yarn: YarnConfig | null;
}

/** One attention + gated-FFN block. */
interface AttentionLayerSpec {
  readonly kind: 'attention';
  readonly nHeads: number;
  readonly nKvHeads: number;
  /** Width of one head (keys, values and queries). */
  readonly headDim: number;
  /** Width of the gated FFN's hidden layer. */
  readonly ffnDim: number;
  /** Keys farther back than this many positions are masked; 0 = global attention. */
  readonly slidingWindow: number;
  /** Rotary embedding, or null for a NoPE layer (positions enter only through the causal mask). */
  readonly rope: LayerRope | null;
}

/**
 * One short gated convolution + gated-FFN block (lfm2): in_proj → B·x → causal depthwise conv over the last
 * `convWidth` inputs → C· → out_proj. Its state per sequence is the last `convWidth − 1` conv inputs (no KV).
 */
interface ShortConvLayerSpec {
  readonly kind: 'shortconv';
  /** Taps of the depthwise convolution (`shortconv.l_cache`). */
  readonly convWidth: number;
  /** Width of the gated FFN's hidden layer. */
  readonly ffnDim: number;
}

/** One block of the model; a union that grows with the layer kinds the runtime learns. */
export type LayerSpec = AttentionLayerSpec | ShortConvLayerSpec;

/** f32 values of recurrent state one sequence keeps for `spec` (0 for attention layers, whose memory is the KV). */
export function recurrentStateSize(spec: LayerSpec, nEmbd: number): number {
  return spec.kind === 'shortconv' ? (spec.convWidth - 1) * nEmbd : 0;
}

/** The per-layer records of `config`, layer 0 first. */
export function describeLayers(config: ModelConfig): LayerSpec[] {
  const c = config;
  return Array.from({ length: c.nLayers }, (_, il): LayerSpec => {
    const ffnDim = c.layerFfnDims[il] ?? c.ffnDim;
    if (c.shortConvLayers[il]) return { kind: 'shortconv', convWidth: c.shortConvWidth, ffnDim };
    const sliding = c.slidingWindow > 0 && c.slidingLayers[il] === true;
    const swaRope = sliding && c.ropeSwa !== null ? c.ropeSwa : null;
    return {
      kind: 'attention',
      nHeads: c.layerHeads[il] ?? c.nHeads,
      nKvHeads: c.nKvHeads,
      headDim: c.headDim,
      ffnDim,
      slidingWindow: sliding ? c.slidingWindow : 0,
      rope: c.noRopeLayers[il]
        ? null
        : swaRope
          ? { theta: swaRope.theta, freqScale: swaRope.freqScale, yarn: null }
          : { theta: c.ropeTheta, freqScale: c.ropeFreqScale, yarn: c.ropeYarn },
    };
  });
}
