/**
 * The layer plan as data: one `LayerSpec` per block, derived once from a `ModelConfig`, that the forward pass,
 * the weight loader and the memory sizing iterate: attention blocks and short-convolution blocks (lfm2); further
 * recurrent and MoE layers become new `kind`s here rather than special cases in the forward pass.
 */

import { deltaNetStateSize } from '../backend/delta-net.js';
import { type Mamba2Dims, mamba2StateSize } from '../backend/mamba2.js';
import type { KvLayerSpec } from '../backend/ops.js';
import type { DeltaNetDims } from '../backend/delta-net-types.js';
import type { ModelConfig, YarnConfig } from './config.js';
import type { MoeRouting } from './moe-config.js';

/** Rotary embedding of one layer (sliding layers may have their own base, gemma3, and rotated width). */
interface LayerRope {
  /** Dimensions rotated per head (≤ headDim). */
  readonly nRot: number;
  /** Base frequency. */
  readonly theta: number;
  /** 1 / linear scaling factor. */
  readonly freqScale: number;
  /** YaRN parameters, or null. */
  readonly yarn: YarnConfig | null;
  /** The model's `rope_freqs` divisors apply to this layer (all layers, or only global ones with `globalRopeFreqs`). */
  readonly freqFactors: boolean;
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

/** One attention + gated-FFN (or mixture-of-experts) block. */
export interface AttentionLayerSpec {
  readonly kind: 'attention';
  readonly nHeads: number;
  /** KV heads of this layer's own KV cache (sized per layer from these records). */
  readonly nKvHeads: number;
  /** Width of one head (keys, values and queries) on this layer. */
  readonly headDim: number;
  /**
   * The layer whose KV cache this one attends over: its own index, or an earlier layer's (gemma4 shared KV): then
   * the layer projects no K/V, stores nothing and keeps no KV of its own.
   */
  readonly kvSource: number;
  /** Width of the dense gated FFN's hidden layer (of the shared expert on a MoE layer; 0 when it has none). */
  readonly ffnDim: number;
  /** The routed experts of the FFN, or null for a dense FFN. */
  readonly moe: MoeLayerSpec | null;
  /** Keys farther back than this many positions are masked; 0 = global attention. */
  readonly slidingWindow: number;
  /** Rotary embedding, or null for a NoPE layer (positions enter only through the causal mask). */
  readonly rope: LayerRope | null;
  /** A Mamba-2 mixer run beside the attention on the same normed input, outputs summed (falcon-h1); or null. */
  readonly ssm: Mamba2Dims | null;
}

/**
 * One short gated convolution + gated-FFN block (lfm2): in_proj → B·x → causal depthwise conv over the last
 * `convWidth` inputs → C· → out_proj. Its state per sequence is the last `convWidth − 1` conv inputs (no KV).
 */
interface ShortConvLayerSpec {
  readonly kind: 'shortconv';
  /** Taps of the depthwise convolution (`shortconv.l_cache`). */
  readonly convWidth: number;
  /** Width of the gated FFN's hidden layer (of the shared expert on a MoE layer; 0 when it has none). */
  readonly ffnDim: number;
  /** The routed experts of the FFN (lfm2moe), or null for a dense FFN. */
  readonly moe: MoeLayerSpec | null;
}

/**
 * One gated DeltaNet + gated-FFN block (qwen35): attn_qkv → conv1d + SiLU → L2-normalised q, k → gated delta rule per
 * value head → RMSNorm · SiLU(z) → ssm_out. Its state per sequence is the conv window and one [headV, headK] matrix
 * per value head (no KV).
 */
export interface DeltaNetLayerSpec {
  readonly kind: 'deltanet';
  readonly dims: DeltaNetDims;
  /** Width of the gated FFN's hidden layer (of the shared expert on a MoE layer; 0 when it has none). */
  readonly ffnDim: number;
  /** The routed experts of the FFN (qwen35moe), or null for a dense FFN. */
  readonly moe: MoeLayerSpec | null;
}

/**
 * One Mamba-2 + FFN block (granitehybrid): ssm_in → conv1d + SiLU over x | B | C → selective scan per head → D skip →
 * y · SiLU(z) grouped RMSNorm → ssm_out. Its state per sequence is the conv window and one [headDim, dState] matrix per
 * head (no KV).
 */
export interface Mamba2LayerSpec {
  readonly kind: 'mamba2';
  readonly dims: Mamba2Dims;
  /** Width of the dense gated FFN's hidden layer (of the shared expert on a MoE layer; 0 when it has none). */
  readonly ffnDim: number;
  /** The routed experts of the FFN, or null for a dense FFN. */
  readonly moe: MoeLayerSpec | null;
}

/**
 * One MLP-only block (nemotron_h): norm → ffn_up → relu² → ffn_down, no token mixer, no state; or (nemotron_h_moe)
 * norm → the ungated relu² experts plus the shared expert.
 */
interface MlpLayerSpec {
  readonly kind: 'mlp';
  /** Width of the MLP's hidden layer (of the shared expert with experts). */
  readonly ffnDim: number;
  /** The routed experts (nemotron_h_moe), or null for the dense MLP. */
  readonly moe: MoeLayerSpec | null;
}

/** One block of the model; a union that grows with the layer kinds the runtime learns. */
export type LayerSpec = AttentionLayerSpec | ShortConvLayerSpec | DeltaNetLayerSpec | Mamba2LayerSpec | MlpLayerSpec;

/** f32 values of recurrent state one sequence keeps for `spec` (0 for attention layers, whose memory is the KV). */
export function recurrentStateSize(spec: LayerSpec, nEmbd: number): number {
  if (spec.kind === 'deltanet') return deltaNetStateSize(spec.dims);
  if (spec.kind === 'mamba2') return mamba2StateSize(spec.dims);
  if (spec.kind === 'attention' && spec.ssm) return mamba2StateSize(spec.ssm);
  return spec.kind === 'shortconv' ? (spec.convWidth - 1) * nEmbd : 0;
}

/** The attention layers' records of `config` (tests and tools that look only at attention geometry). */
export function attentionLayers(config: ModelConfig): AttentionLayerSpec[] {
  return describeLayers(config).filter((l): l is AttentionLayerSpec => l.kind === 'attention');
}

/** The per-layer records of `config`, layer 0 first. */
export function describeLayers(config: ModelConfig): LayerSpec[] {
  const c = config;
  return Array.from({ length: c.nLayers }, (_, il): LayerSpec => {
    const m = c.moe;
    const moe = layerMoe(c, il);
    // The FFN is the same on every layer kind: dense, or the experts plus the shared expert's width.
    const ffnDim = moe && m ? m.sharedDim : (c.layerFfnDims[il] ?? c.ffnDim);
    if (c.mlpLayers[il]) return { kind: 'mlp', ffnDim, moe };
    if (c.shortConvLayers[il]) return { kind: 'shortconv', convWidth: c.shortConvWidth, ffnDim, moe };
    if (c.deltaNetLayers[il] && c.deltaNet) return { kind: 'deltanet', dims: c.deltaNet, ffnDim, moe };
    if (c.mamba2Layers[il] && c.mamba2 && !c.mamba2Parallel) return { kind: 'mamba2', dims: c.mamba2, ffnDim, moe };
    const sliding = c.slidingWindow > 0 && c.slidingLayers[il] === true;
    const swaRope = sliding && c.ropeSwa !== null ? c.ropeSwa : null;
    const nRot = sliding ? c.ropeDimsSwa : c.ropeDims;
    const freqFactors = !(c.globalRopeFreqs && sliding);
    return {
      kind: 'attention',
      nHeads: c.layerHeads[il] ?? c.nHeads,
      nKvHeads: c.layerKvHeads[il] ?? c.nKvHeads,
      headDim: sliding ? c.headDimSwa : c.headDim,
      kvSource: c.kvSources[il] ?? il,
      ffnDim,
      moe,
      slidingWindow: sliding ? c.slidingWindow : 0,
      ssm: c.mamba2Parallel && c.mamba2Layers[il] ? c.mamba2 : null,
      rope: c.noRopeLayers[il]
        ? null
        : swaRope
          ? {
              nRot,
              theta: swaRope.theta,
              freqScale: swaRope.freqScale,
              yarn: swaRope.withYarn ? c.ropeYarn : null,
              freqFactors,
            }
          : { nRot, theta: c.ropeTheta, freqScale: c.ropeFreqScale, yarn: c.ropeYarn, freqFactors },
    };
  });
}

/** The routed experts of layer il, or null for a dense FFN. */
function layerMoe(c: ModelConfig, il: number): MoeLayerSpec | null {
  const m = c.moe;
  return m?.layerIsMoe[il] !== true
    ? null
    : {
        gating: m.gating,
        normWeights: m.normWeights,
        shared: m.shared,
        nExperts: m.nExperts,
        nUsed: m.layerUsed[il],
        expertDim: m.layerExpertDims[il],
        weightsScale: m.weightsScale,
        ...(m.branchNorms ? { branchNorms: true } : {}),
        ...(m.fusedGateUp ? { fusedGateUp: true } : {}),
        ...(m.ungated ? { ungated: true } : {}),
      };
}

/** The KV cache geometry of `layers`: each layer's own KV heads and head size. */
export function kvLayersOf(layers: readonly LayerSpec[]): KvLayerSpec[] {
  // A layer without attention (short convolution, DeltaNet) or reading another layer's KV keeps no KV: 0 columns.
  return layers.map((l, il) =>
    l.kind === 'attention' && l.kvSource === il
      ? { nKvHeads: l.nKvHeads, headDim: l.headDim }
      : { nKvHeads: 0, headDim: 0 },
  );
}
