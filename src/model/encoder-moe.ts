/**
 * The mixture-of-experts FFN of an encoder layer (nomic-bert-moe; llama.cpp `build_moe_ffn` with LLM_FFN_GELU and no
 * gate): on the post-norm input x, router logits = x · ffn_gate_inpᵀ, the top nUsed experts by softmax probability
 * (weights those probabilities, not re-normalised), per selected expert down(gelu(up(x))), their weighted sum added to
 * x. Composed from `Ops` primitives (`moeRoute`, `matmulExperts`, `moeCombine`), so every backend runs it.
 */

import type { Activation, Ops, Weight } from '../backend/ops.js';
import type { MoeRouteParams } from '../backend/moe-step.js';

/** One MoE layer's weights. */
export interface EncoderExperts {
  readonly router: Weight; // [nExperts rows, nEmbd] (ffn_gate_inp)
  readonly up: Weight; // nExperts × [ffnDim rows, nEmbd] (ffn_up_exps)
  readonly down: Weight; // nExperts × [nEmbd rows, ffnDim] (ffn_down_exps)
  readonly nExperts: number;
}

/** The buffers an encoder MoE layer computes in (shared by the layers of one shape). */
export interface EncoderMoeScratch {
  readonly logits: Activation; // [ubatch, nExperts]
  readonly ids: Activation; // [ubatch, nUsed] selected experts (integers held in f32)
  readonly weights: Activation; // [ubatch, nUsed]
  readonly up: Activation; // [ubatch·nUsed, ffnDim]
  readonly down: Activation; // [ubatch·nUsed, nEmbd]
}

const ROUTE: MoeRouteParams = { gating: 'softmax', normWeights: false, scale: 1, selectionBias: null };

/** Allocates the scratch of a MoE layer for steps of `ubatch` tokens. */
export function encoderMoeScratch(
  ops: Ops,
  ubatch: number,
  nEmbd: number,
  ffnDim: number,
  nExperts: number,
  nUsed: number,
): EncoderMoeScratch {
  return {
    logits: ops.createActivation('moe.logits', ubatch, nExperts),
    ids: ops.createActivation('moe.ids', ubatch, nUsed),
    weights: ops.createActivation('moe.weights', ubatch, nUsed),
    up: ops.createActivation('moe.up', ubatch * nUsed, ffnDim),
    down: ops.createActivation('moe.down', ubatch * nUsed, nEmbd),
  };
}

/** x [n, nEmbd] += Σ_k w_k · down_k(gelu(up_k(x))); `out` ([n, nEmbd], not x) receives the sum first. */
export function encoderMoeFfn(
  ops: Ops,
  x: Activation,
  out: Activation,
  w: EncoderExperts,
  s: EncoderMoeScratch,
  n: number,
): void {
  const nUsed = s.ids.cols;
  ops.matmul(s.logits, x, w.router, n); // logits [n, nExperts]
  ops.moeRoute(s.ids, s.weights, s.logits, n, ROUTE); // ids, weights [n, nUsed]
  ops.matmulExperts(s.up, x, w.up, w.nExperts, s.ids, n, false); // up [n·nUsed, ffnDim]
  ops.gelu(s.up, n * nUsed);
  ops.matmulExperts(s.down, s.up, w.down, w.nExperts, s.ids, n, true); // down [n·nUsed, nEmbd]
  ops.moeCombine(out, s.down, s.weights, n); // out [n, nEmbd]
  ops.add(x, x, out, n);
}
