/**
 * gemma3n's AltUp around the one forward pass (llama.cpp `llama_model_gemma3n::graph`), every step an `Ops` call:
 * - `stack`: the scaled token embedding x₀ is stream 0; stream i ≥ 1 is altup_proj_i · x₀ rescaled to ‖x₀‖ per row.
 * - `predict` (before layer l): modalities m = tanh(router · rmsNorm(s_act, router_norm) / nEmbd) [n, N]; coefficients
 *   C = predict_coef · m [n, N·N]; prediction p_j = s_j + Σ_k C[j·N + k] · s_k; the layer runs on x = p_act. LAuReL:
 *   lau = xn + rmsNorm(laurel_r · laurel_l · xn, laurel_post_norm), xn = attn_norm(x).
 * - `laurelAdd` (after attention): x = (x + lau) / √2.
 * - `sparseGate` (FFN of the first layers): the gate projection goes through gaussian top-k before GELU.
 * - `correct` (after the FFN): m from x, c = correct_coef · m [n, N]; s_i = p_i + (c_i + 1) · (x − p_act); then the
 *   layer's per-layer input d = post_norm(proj · (gelu(inp_gate · (s_act ⊙ correct_scale)) ⊙ in_l)) is added to
 *   streams 1 … N−1.
 * - `merge` (after the last layer): x = (s_0 + Σ_{i≥1} rescale(altup_unembd_proj_i · s_i, ‖s_act‖)) / N.
 */

import type { Activation, GluActivation, GluScratch, Ops, RmsNormWeight, Weight } from '../backend/ops.js';
import type { AltUpConfig } from './altup-config.js';
import type { ModelConfig } from './config.js';
import type { PerLayerBlockWeights, PerLayerInput } from './per-layer-input.js';

/** One layer's AltUp and LAuReL weights. */
export interface AltUpLayerWeights {
  readonly routerNorm: Weight; // [nEmbd]
  readonly router: Weight; // [N rows, nEmbd]
  readonly predictCoef: Weight; // [N·N rows, N]
  readonly correctCoef: Weight; // [N rows, N]
  readonly correctScale: Weight; // [nEmbd]
  readonly laurelL: Weight; // [rank rows, nEmbd]
  readonly laurelR: Weight; // [nEmbd rows, rank]
  readonly laurelPostNorm: Weight; // [nEmbd]
}

/** The model's AltUp weights. */
export interface AltUpWeights {
  /** Stream i + 1's projection from x₀: [nEmbd rows, nEmbd] each (N − 1). */
  readonly proj: readonly Weight[];
  /** Stream i + 1's projection back before the merge: [nEmbd rows, nEmbd] each (N − 1). */
  readonly unembd: readonly Weight[];
  readonly layers: readonly AltUpLayerWeights[];
}

/** The AltUp streams of one model on one backend (buffers allocated once, at construction). */
export class AltUp {
  private readonly s: readonly Activation[]; // N × [ubatch, nEmbd] streams
  private readonly p: readonly Activation[]; // N × [ubatch, nEmbd] predictions
  private readonly mod: Activation; // [ubatch, N] router modalities
  private readonly coef: Activation; // [ubatch, N·N] prediction coefficients
  private readonly ccoef: Activation; // [ubatch, N] correction coefficients
  private readonly r: Activation; // [ubatch, nEmbd] router input, then the innovation, then the per-layer delta
  private readonly d: Activation; // [ubatch, nEmbd] the gated active stream (per-layer input gate)
  private readonly lauN: Activation; // [ubatch, nEmbd] attn_norm(x)
  private readonly lauA: Activation; // [ubatch, rank]
  private readonly lauOut: Activation; // [ubatch, nEmbd] LAuReL output
  private readonly a: AltUpConfig;
  private readonly routerScale: number;
  private readonly eps: number;
  private readonly act: GluActivation;

  constructor(
    c: ModelConfig,
    private readonly w: AltUpWeights,
    act: (key: string) => Activation,
    private readonly perLayer: PerLayerInput | null,
  ) {
    this.a = c.altup!;
    const N = this.a.nInputs;
    this.s = Array.from({ length: N }, (_, i) => act(`altup_s:${i}`));
    this.p = Array.from({ length: N }, (_, i) => act(`altup_p:${i}`));
    this.mod = act('altup_mod');
    this.coef = act('altup_coef');
    this.ccoef = act('altup_ccoef');
    this.r = act('altup_r');
    this.d = act('altup_d');
    this.lauN = act('laurel_n');
    this.lauA = act('laurel_a');
    this.lauOut = act('laurel_out');
    this.routerScale = Math.fround(1 / c.embeddingLength);
    this.eps = c.normEps;
    this.act = c.activation;
  }

  /** The streams from the scaled token embeddings x ([n, nEmbd]). */
  stack(ops: Ops, x: Activation, n: number): void {
    ops.copyRows(this.s[0], x, 0, n);
    for (let i = 1; i < this.s.length; i++) {
      ops.matmul(this.s[i], x, this.w.proj[i - 1], n); // s_i [n, nEmbd]
      ops.altUp.matchMagnitude(this.s[i], x, n);
    }
  }

  /** Predicts the streams of layer il and sets x to the active one; computes the layer's LAuReL output. */
  predict(ops: Ops, il: number, x: Activation, n: number, attnNorm: RmsNormWeight | null): void {
    const lw = this.w.layers[il];
    const N = this.s.length;
    this.modalities(ops, lw, this.s[this.a.activeIdx], n);
    ops.matmul(this.coef, this.mod, lw.predictCoef, n); // coef [n, N·N]
    for (let j = 0; j < N; j++) {
      ops.copyRows(this.p[j], this.s[j], 0, n);
      for (let k = 0; k < N; k++) ops.altUp.addScaledRows(this.p[j], this.s[k], this.coef, j * N + k, 0, n);
    }
    ops.copyRows(x, this.p[this.a.activeIdx], 0, n); // x [n, nEmbd] = active prediction
    // LAuReL of the attention input: lau = xn + rmsNorm(laurel_r · laurel_l · xn)
    if (attnNorm) ops.rmsNorm(this.lauN, x, attnNorm.weight, attnNorm.eps, n);
    else ops.copyRows(this.lauN, x, 0, n);
    ops.matmul(this.lauA, this.lauN, lw.laurelL, n); // [n, rank]
    ops.matmul(this.lauOut, this.lauA, lw.laurelR, n); // [n, nEmbd]
    ops.rmsNorm(this.lauOut, this.lauOut, lw.laurelPostNorm, this.eps, n);
    ops.add(this.lauOut, this.lauOut, this.lauN, n);
  }

  /** After attention: x = (x + LAuReL) / √2. */
  laurelAdd(ops: Ops, x: Activation, n: number): void {
    ops.add(x, x, this.lauOut, n);
    ops.scale(x, Math.fround(1 / Math.fround(Math.SQRT2)), n);
  }

  /**
   * The FFN up to its down projection with a sparsified gate on the layers that have one: out = act(topk(gate ·
   * rmsNorm(x))) · (up · rmsNorm(x)). Returns false (nothing done) on a dense layer.
   */
  sparseGate(
    ops: Ops,
    il: number,
    out: Activation,
    x: Activation,
    norm: RmsNormWeight | null,
    gate: Weight,
    up: Weight,
    scratch: GluScratch,
    n: number,
  ): boolean {
    const z = this.a.sparsity[il];
    if (z === null || z === undefined) return false;
    if (norm) ops.rmsNorm(scratch.normed, x, norm.weight, norm.eps, n); // normed [n, nEmbd]
    const src = norm ? scratch.normed : x;
    ops.matmul(scratch.gate, src, gate, n); // gate [n, ffn]
    ops.altUp.gaussianTopK(scratch.gate, z, n);
    ops.matmul(scratch.up, src, up, n); // up [n, ffn]
    ops.glu(out, scratch.gate, scratch.up, n, this.act);
    return true;
  }

  /** Corrects the streams with the layer's output x and adds its per-layer input to streams 1 … N−1. */
  correct(ops: Ops, il: number, x: Activation, n: number, perLayer: PerLayerBlockWeights | null): void {
    const lw = this.w.layers[il];
    const act = this.a.activeIdx;
    this.modalities(ops, lw, x, n);
    ops.matmul(this.ccoef, this.mod, lw.correctCoef, n); // ccoef [n, N]
    ops.copyRows(this.r, this.p[act], 0, n);
    ops.scale(this.r, -1, n);
    ops.add(this.r, this.r, x, n); // innovation r = x − p_act
    for (let i = 0; i < this.s.length; i++) {
      ops.copyRows(this.s[i], this.p[i], 0, n);
      ops.altUp.addScaledRows(this.s[i], this.r, this.ccoef, i, 1, n); // s_i = p_i + (c_i + 1) · r
    }
    if (!perLayer || !this.perLayer) return;
    ops.copyRows(this.d, this.s[act], 0, n);
    ops.altUp.mulVector(this.d, lw.correctScale, n);
    this.perLayer.delta(ops, il, this.r, this.d, n, perLayer); // r [n, nEmbd]
    for (let i = 1; i < this.s.length; i++) ops.add(this.s[i], this.s[i], this.r, n);
  }

  /** x = the streams merged back into one ([n, nEmbd]). */
  merge(ops: Ops, x: Activation, n: number): void {
    const target = this.s[this.a.activeIdx];
    ops.copyRows(x, this.s[0], 0, n);
    for (let i = 1; i < this.s.length; i++) {
      ops.matmul(this.p[i], this.s[i], this.w.unembd[i - 1], n); // [n, nEmbd]
      ops.altUp.matchMagnitude(this.p[i], target, n);
      ops.add(x, x, this.p[i], n);
    }
    ops.scale(x, Math.fround(1 / this.s.length), n);
  }

  /** mod [n, N] = tanh(router · rmsNorm(src, router_norm) / nEmbd). */
  private modalities(ops: Ops, lw: AltUpLayerWeights, src: Activation, n: number): void {
    ops.rmsNorm(this.r, src, lw.routerNorm, this.eps, n);
    ops.scale(this.r, this.routerScale, n);
    ops.matmul(this.mod, this.r, lw.router, n);
    ops.softcap(this.mod, 1, n); // 1 · tanh(v / 1) = tanh(v)
  }
}
