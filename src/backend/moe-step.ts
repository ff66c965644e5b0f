/**
 * The records of one mixture-of-experts FFN step (`Ops.moeFfn`): how the router turns logits into expert weights
 * (`MoeRouteParams`, llama.cpp `build_moe_ffn`), the expert stacks, biases and shared expert, and the buffers the
 * default composition computes in. Built once at load by the model; read by every backend.
 */

import type { Activation, GluActivation, RmsNormWeight, Weight } from './ops.js';

/** How `moeRoute` turns router logits into expert weights (llama.cpp `build_moe_ffn`). */
export interface MoeRouteParams {
  /** probs = softmax(logits), or sigmoid per expert; 'softmax-weight' (gpt-oss): softmax of the top-k logits only. */
  readonly gating: 'softmax' | 'sigmoid' | 'softmax-weight';
  /** Divide the selected probabilities by their sum (clamped below at 2⁻¹⁴, as ggml). */
  readonly normWeights: boolean;
  /** Multiplier of the weights after normalisation (1 = none). */
  readonly scale: number;
  /** Per-expert bias [nExperts] added to the probabilities to select experts (not to the weights), or null. */
  readonly selectionBias: Weight | null;
  /**
   * Per-expert multiplier [nExperts] of a selected expert's weight, applied last (gemma4's `ffn_down_exps.scale`, which
   * ggml multiplies into that expert's down output); absent or null for none.
   */
  readonly expertScale?: Weight | null;
}

/** Buffers the default `moeFfn` composition computes in (rows are tokens, or token·nUsed + slot). */
interface MoeScratch {
  readonly normed: Activation; // [ubatch, nEmbd]
  readonly logits: Activation; // [ubatch, nExperts] router logits
  readonly ids: Activation; // [ubatch, nUsed] selected experts (integers held in f32)
  readonly weights: Activation; // [ubatch, nUsed] their routing weights
  readonly gate: Activation; // [ubatch·nUsed, expertDim]
  readonly up: Activation; // [ubatch·nUsed, expertDim]
  readonly hidden: Activation; // [ubatch·nUsed, expertDim]
  readonly down: Activation; // [ubatch·nUsed, nEmbd] per-expert outputs (then the shared expert's output)
  readonly out: Activation; // [ubatch, nEmbd] the FFN's output before the residual add
}

/** The shared expert of a MoE FFN (qwen2moe): a dense gated FFN, optionally gated by sigmoid(x · gateInp). */
interface SharedExpert {
  readonly gate: Weight; // [sharedDim rows, nEmbd]
  readonly up: Weight; // [sharedDim rows, nEmbd]
  readonly down: Weight; // [nEmbd rows, sharedDim]
  readonly gateInp: Weight | null; // [nEmbd]: one row
  /** Its own pre-norm of the layer input (gemma4's `ffn_norm`; absent: the experts' normalised input). */
  readonly norm?: RmsNormWeight | null;
  /** RMSNorm of its output before it joins the experts' (gemma4's `post_ffw_norm_1`). */
  readonly postNorm?: RmsNormWeight | null;
  /** Buffers of its hidden layer. */
  readonly scratch: {
    readonly gate: Activation;
    readonly up: Activation;
    readonly hidden: Activation;
    readonly logit: Activation;
  }; // [ubatch, sharedDim] ×3, [ubatch, 1]
}

/** Per-expert output biases (gpt-oss), f32 vectors of nExperts rows: gate, up [nExperts·expertDim], down [·nEmbd]. */
export interface ExpertBiases {
  readonly gate: Weight;
  readonly up: Weight;
  readonly down: Weight;
}

/** Everything one mixture-of-experts FFN step takes besides its input (built once at load). */
export interface MoeStep {
  readonly router: Weight; // [nExperts rows, nEmbd] (ffn_gate_inp)
  /** 3-D expert stacks in ggml order [nEmbd, expertDim, nExperts]: expert e owns rows e·expertDim … */
  readonly gate: Weight; // [nExperts·expertDim rows, nEmbd]
  readonly up: Weight; // [nExperts·expertDim rows, nEmbd]
  readonly down: Weight; // [nExperts·nEmbd rows, expertDim]
  readonly nExperts: number;
  readonly route: MoeRouteParams;
  /**
   * The experts' GLU: `glu` with a `GluActivation`, or gpt-oss's clamped SwiGLU (`swigluOai`); 'relu2' (nemotron_h_moe):
   * no gate, the hidden layer is relu²(up) (`reluSquared`) for the experts and the shared expert alike, and `gate`
   * (and the shared expert's) is the up weight, unread.
   */
  readonly activation: GluActivation | 'swiglu-oai' | 'relu2';
  /** Bias of the router logits [nExperts] (gpt-oss), or absent/null. */
  readonly routerBias?: Weight | null;
  /** Per-expert biases of the gate, up and down outputs (gpt-oss; see `addExpertBias`), or absent/null. */
  readonly expertBias?: ExpertBiases | null;
  /** Multiplier of the FFN output before the residual add (granite's `residual_scale`; 1 = none). */
  readonly residualScale: number;
  readonly shared: SharedExpert | null;
  readonly scratch: MoeScratch;
  /**
   * The router's own input, rmsNorm(x) · weight · scale (gemma4: `ffn_gate_inp.scale`, 1/√nEmbd); absent: the experts'
   * normalised input.
   */
  readonly routerNorm?: (RmsNormWeight & { readonly scale: number }) | null;
  /** RMSNorm of the experts' weighted sum before the shared expert joins it (gemma4's `post_ffw_norm_2`). */
  readonly expertsPostNorm?: RmsNormWeight | null;
  /** RMSNorm of the whole FFN output before the residual add (the layer's post-FFN norm, gemma4). */
  readonly outNorm?: RmsNormWeight | null;
  /** When set, `gate` is a fused stack (per expert its gate rows, then its up rows) multiplied into this buffer. */
  readonly gateUp?: Activation | null; // [ubatch·nUsed, 2·expertDim]
}
