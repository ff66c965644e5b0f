/**
 * The weights of a model as uploaded to one backend: per layer the attention block's (or a short-convolution
 * block's), the dense gated FFN's or a mixture of experts', and the model-wide embedding, output and rope tables.
 * Shapes in the comments are row-major [rows, row length] as the backends see them.
 */

import type { Weight } from '../backend/ops.js';
import type { ExpertBiases } from '../backend/moe-step.js';
import type { AltUpWeights } from './altup.js';
import type { PerLayerBlockWeights, PerLayerWeights } from './per-layer-input.js';
import type { RankHead } from './pooling.js';
import type { DeltaNetLayerWeights } from './delta-net-layer.js';
import type { Mamba2LayerWeights, Mamba2SsmWeights } from './mamba2-layer.js';
import type { MlpLayerWeights } from './mlp-layer.js';

/** Weights of one block; optional ones are null when the architecture or file has none. */
export interface LayerWeights {
  readonly attnNorm: Weight | null; // [nEmbd] (null: no pre-norm, olmo2)
  readonly wq: Weight; // [nHeads·headDim rows, nEmbd]
  readonly wk: Weight | null; // [nKvHeads·headDim rows, nEmbd] (null: the layer reads another layer's KV)
  readonly wv: Weight | null; // [nKvHeads·headDim rows, nEmbd] (null: KV shared, or V = K with `valueNorm`)
  readonly bq: Weight | null; // [nHeads·headDim]
  readonly bk: Weight | null; // [nKvHeads·headDim]
  readonly bv: Weight | null; // [nKvHeads·headDim]
  readonly qNorm: Weight | null; // [headDim], or [nHeads·headDim] when normalising all heads together (olmo2)
  readonly kNorm: Weight | null; // [headDim], or [nKvHeads·headDim]
  readonly wo: Weight; // [nEmbd rows, nHeads·headDim]
  readonly bo: Weight | null; // [nEmbd]
  readonly sinks: Weight | null; // [nHeads] attention sink logits (gpt-oss)
  readonly postAttnNorm: Weight | null; // [nEmbd]
  readonly ffnNorm: Weight | null; // [nEmbd] (null: no pre-norm)
  /** The dense gated FFN (null on a mixture-of-experts layer, which has `moe`). */
  readonly gate: Weight | null; // [ffnDim rows, nEmbd]
  readonly up: Weight | null; // [ffnDim rows, nEmbd]
  readonly down: Weight | null; // [nEmbd rows, ffnDim]
  /** The experts of a mixture-of-experts layer, or null. */
  readonly moe: MoeWeights | null;
  readonly postFfnNorm: Weight | null; // [nEmbd]
  /** Gate into the layer's per-layer token embedding and projection back (gemma4), or null. */
  readonly perLayer: PerLayerBlockWeights | null;
  /** Multiplier of the residual stream after the block (`layer_output_scale`), 1 = none. */
  readonly outScale: number;
  /** The Mamba-2 mixer run beside the attention (falcon-h1), or null. */
  readonly ssm: Mamba2SsmWeights | null;
}

/** A dense gated FFN (a MoE layer's shared expert). */
export interface DenseFfnWeights {
  readonly gate: Weight; // [ffnDim rows, nEmbd]
  readonly up: Weight; // [ffnDim rows, nEmbd]
  readonly down: Weight; // [nEmbd rows, ffnDim]
}

/** The experts of a MoE FFN: 3-D stacks uploaded as one weight each (expert e owns rows e·rows … (e+1)·rows). */
export interface MoeWeights {
  readonly router: Weight; // [nExperts rows, nEmbd]
  /** With `MoeRouting.fusedGateUp`, gate and up are the same fused stack [nExperts·2·expertDim rows, nEmbd]. */
  readonly gate: Weight; // [nExperts·expertDim rows, nEmbd]
  readonly up: Weight; // [nExperts·expertDim rows, nEmbd]
  readonly down: Weight; // [nExperts·nEmbd rows, expertDim]
  /** Router bias [nExperts] and per-expert output biases (gpt-oss), or null. */
  readonly routerBias: Weight | null;
  readonly expertBias: ExpertBiases | null;
  /** Selection bias of the router probabilities (`exp_probs_b`) [nExperts], or null. */
  readonly selectionBias: Weight | null;
  /** The shared expert (its sigmoid gate `gateInp` [nEmbd] when the architecture has one), or null. */
  readonly shared: (DenseFfnWeights & { readonly gateInp: Weight | null }) | null;
  /** Per-expert multiplier of an expert's output (`ffn_down_exps.scale`) [nExperts], or null. */
  readonly expertScale: Weight | null;
  /**
   * gemma4's branch norms: the router's input scale `ffn_gate_inp.scale`, the experts' pre-norm `pre_ffw_norm_2` and
   * post-norm `post_ffw_norm_2`, the shared expert's post-norm `post_ffw_norm_1` (each [nEmbd]); or null.
   */
  readonly branch: {
    readonly routerNorm: Weight;
    readonly expertsNorm: Weight;
    readonly expertsPostNorm: Weight;
    readonly sharedPostNorm: Weight;
  } | null;
}

/** Weights of a short-convolution block (lfm2); its FFN weights are those of an attention block. */
export interface ShortConvLayerWeights {
  readonly kind: 'shortconv';
  readonly attnNorm: Weight; // [nEmbd] operator norm
  readonly inProj: Weight; // [3·nEmbd rows, nEmbd]: B | C | x
  readonly conv: Weight; // [nEmbd rows, taps] depthwise kernel
  readonly outProj: Weight; // [nEmbd rows, nEmbd]
  readonly ffnNorm: Weight; // [nEmbd]
  /** The dense gated FFN (null on a mixture-of-experts layer, which has `moe`; lfm2moe). */
  readonly gate: Weight | null; // [ffnDim rows, nEmbd]
  readonly up: Weight | null; // [ffnDim rows, nEmbd]
  readonly down: Weight | null; // [nEmbd rows, ffnDim]
  readonly moe: MoeWeights | null;
  readonly postFfnNorm: null;
}

/** Every weight of a model, as uploaded to one backend. */
export interface ModelWeights {
  readonly tokenEmbd: Weight; // [vocab rows, nEmbd]
  readonly outputNorm: Weight; // [nEmbd]
  /** The lm head: `output.weight`, or `tokenEmbd` itself when tied. */
  readonly output: Weight; // [vocab rows, nEmbd]
  readonly outputBias: Weight | null; // [vocab]
  /** Per-dimension rope frequency divisors (`rope_freqs` / LongRoPE factors), [ropeDims / 2]. */
  readonly ropeFreqFactors: Float32Array | null;
  /** Per-layer token embeddings (gemma4), or null. */
  readonly perLayer: PerLayerWeights | null;
  readonly layers: readonly (
    | LayerWeights
    | ShortConvLayerWeights
    | DeltaNetLayerWeights
    | Mamba2LayerWeights
    | MlpLayerWeights
  )[];
  /** Classifier of a rank-pooling model (host-side), or null. */
  readonly rankHead?: RankHead | null;
  /** AltUp streams and LAuReL (gemma3n), or null. */
  readonly altUp?: AltUpWeights | null;
}
