/**
 * `CompositeOps`: the compound steps of `Ops` (norm → projections, matmul → residual add, norm → gate·up → GLU,
 * rope → KV store) written once over the primitive ops. Every backend extends it; one with fused kernels overrides
 * a step and calls `super` for the cases its kernels do not cover, so the forward pass never branches on fusion.
 */

import type {
  Activation,
  GluActivation,
  GluScratch,
  Projection,
  ResidualOptions,
  RmsNormWeight,
  RopeParams,
  Weight,
} from './ops.js';
import type { MoeRouteParams, MoeStep } from './moe-step.js';

/** The default composition of the compound `Ops` steps (see `Ops` for their contracts). */
export abstract class CompositeOps {
  abstract rmsNorm(
    out: Activation,
    x: Activation,
    weight: Weight | null,
    eps: number,
    n: number,
    groupSize?: number,
  ): void;
  abstract matmul(out: Activation, x: Activation, w: Weight, n: number, bias?: Weight | null): void;
  abstract rope(x: Activation, n: number, params: RopeParams): void;
  abstract storeKv(layer: number, k: Activation, v: Activation, n: number): void;
  abstract glu(out: Activation, gate: Activation, up: Activation, n: number, act: GluActivation): void;
  abstract add(out: Activation, a: Activation, b: Activation, n: number): void;
  abstract moeRoute(ids: Activation, weights: Activation, logits: Activation, n: number, params: MoeRouteParams): void;
  abstract matmulExperts(
    out: Activation,
    x: Activation,
    w: Weight,
    nExperts: number,
    ids: Activation,
    n: number,
    xPerSlot: boolean,
  ): void;
  abstract moeCombine(out: Activation, y: Activation, weights: Activation, n: number): void;
  abstract sigmoidGatedAdd(out: Activation, y: Activation, gate: Activation, n: number): void;
  abstract addExpertBias(out: Activation, bias: Weight, ids: Activation, n: number): void;
  abstract swigluOai(out: Activation, gate: Activation, up: Activation, n: number): void;
  abstract reluSquared(x: Activation, n: number): void;
  abstract splitHeadPairs(q: Activation, gate: Activation, qg: Activation, n: number, headDim: number): void;

  abstract scale(x: Activation, s: number, n: number): void;

  /** normed = rmsNorm(x) once (x itself without a norm); then each projection's out = normed · weightᵀ (+ bias). */
  normMatmul(
    normed: Activation,
    x: Activation,
    norm: RmsNormWeight | null,
    projections: readonly Projection[],
    n: number,
  ): void {
    if (norm) this.rmsNorm(normed, x, norm.weight, norm.eps, n); // normed [n, cols]
    const src = norm ? normed : x;
    for (let i = 0; i < projections.length; i++) {
      const p = projections[i]; // indexed: no iterator per call (the decode loop allocates nothing)
      this.matmul(p.out, src, p.weight, n, p.bias); // out [n, weight.nRows]
    }
  }

  /** scratch = input · wᵀ (+ bias), post-normed and scaled when asked; x += scratch. */
  matmulResidual(x: Activation, input: Activation, w: Weight, n: number, options: ResidualOptions): void {
    const s = options.scratch;
    this.matmul(s, input, w, n, options.bias); // scratch [n, w.nRows]
    if (options.postNorm) this.rmsNorm(s, s, options.postNorm.weight, options.postNorm.eps, n);
    if (options.scale !== 1) this.scale(s, options.scale, n);
    this.add(x, x, s, n);
  }

  /** out = act(rmsNorm(x) · gateᵀ) · (rmsNorm(x) · upᵀ) (x itself without a norm), through the scratch buffers. */
  gatedFfn(
    out: Activation,
    x: Activation,
    norm: RmsNormWeight | null,
    gate: Weight,
    up: Weight,
    n: number,
    act: GluActivation,
    scratch: GluScratch,
  ): void {
    if (norm) this.rmsNorm(scratch.normed, x, norm.weight, norm.eps, n); // normed [n, cols]
    const src = norm ? scratch.normed : x;
    this.matmul(scratch.gate, src, gate, n); // gate [n, ffn]
    this.matmul(scratch.up, src, up, n); // up [n, ffn]
    this.glu(out, scratch.gate, scratch.up, n, act); // out = act(gate) · up
  }

  /**
   * normed = rmsNorm(x); route (router bias); gate/up over the selected experts (+ their biases); GLU; down (+ bias);
   * weighted sum (+ shared); x += out.
   */
  moeFfn(x: Activation, norm: RmsNormWeight, step: MoeStep, n: number): void {
    const s = step.scratch;
    const nUsed = s.ids.cols;
    this.rmsNorm(s.normed, x, norm.weight, norm.eps, n); // normed [n, nEmbd]
    const rn = step.routerNorm;
    if (rn) {
      // The router's own input in down's first n rows (free until the experts write it): [n, nEmbd].
      this.rmsNorm(s.down, x, rn.weight, rn.eps, n);
      if (rn.scale !== 1) this.scale(s.down, rn.scale, n);
    }
    this.matmul(s.logits, rn ? s.down : s.normed, step.router, n, step.routerBias); // logits [n, nExperts]
    this.moeRoute(s.ids, s.weights, s.logits, n, step.route); // ids, weights [n, nUsed]
    const act = step.activation;
    if (step.gateUp) {
      this.matmulExperts(step.gateUp, s.normed, step.gate, step.nExperts, s.ids, n, false); // [n·nUsed, 2·expertDim]
      this.splitHeadPairs(s.gate, s.up, step.gateUp, n * nUsed, s.gate.cols); // gate, up [n·nUsed, expertDim]
    } else {
      if (act !== 'relu2') this.matmulExperts(s.gate, s.normed, step.gate, step.nExperts, s.ids, n, false); // gate
      // up [n·nUsed, expertDim]; ungated (relu2): straight into hidden
      this.matmulExperts(act === 'relu2' ? s.hidden : s.up, s.normed, step.up, step.nExperts, s.ids, n, false);
    }
    const eb = step.expertBias;
    if (eb) {
      this.addExpertBias(s.gate, eb.gate, s.ids, n);
      this.addExpertBias(s.up, eb.up, s.ids, n);
    }
    this.expertGlu(s.hidden, s.gate, s.up, n * nUsed, act); // hidden [n·nUsed, expertDim]
    this.matmulExperts(s.down, s.hidden, step.down, step.nExperts, s.ids, n, true); // down [n·nUsed, nEmbd]
    if (eb) this.addExpertBias(s.down, eb.down, s.ids, n);
    this.moeCombine(s.out, s.down, s.weights, n); // out [n, nEmbd]
    const pn = step.expertsPostNorm;
    if (pn) this.rmsNorm(s.out, s.out, pn.weight, pn.eps, n);
    const sh = step.shared;
    if (sh) {
      const h = sh.scratch;
      const own = sh.norm;
      if (own) this.rmsNorm(s.down, x, own.weight, own.eps, n); // its own normalised input in down's first n rows
      const input = own ? s.down : s.normed;
      if (act !== 'relu2') this.matmul(h.gate, input, sh.gate, n); // [n, sharedDim]
      this.matmul(act === 'relu2' ? h.hidden : h.up, input, sh.up, n);
      this.expertGlu(h.hidden, h.gate, h.up, n, act);
      if (sh.gateInp) this.matmul(h.logit, input, sh.gateInp, n); // [n, 1] (before down overwrites the input)
      this.matmul(s.down, h.hidden, sh.down, n); // down's first n rows [n, nEmbd]
      if (sh.postNorm) this.rmsNorm(s.down, s.down, sh.postNorm.weight, sh.postNorm.eps, n);
      if (sh.gateInp) this.sigmoidGatedAdd(s.out, s.down, h.logit, n);
      else this.add(s.out, s.out, s.down, n);
    }
    const on = step.outNorm;
    if (on) this.rmsNorm(s.out, s.out, on.weight, on.eps, n);
    if (step.residualScale !== 1) this.scale(s.out, step.residualScale, n);
    this.add(x, x, s.out, n);
  }

  /** A MoE layer's GLU over `rows` rows: `glu`, `swigluOai` for gpt-oss, or relu² of `out` in place (no gate). */
  private expertGlu(
    out: Activation,
    gate: Activation,
    up: Activation,
    rows: number,
    act: GluActivation | 'swiglu-oai' | 'relu2',
  ): void {
    if (act === 'relu2') this.reluSquared(out, rows);
    else if (act === 'swiglu-oai') this.swigluOai(out, gate, up, rows);
    else this.glu(out, gate, up, rows, act);
  }

  /** Rotates q and k in place, then stores k and v in `layer` of the step's slot. */
  ropeStoreKv(layer: number, q: Activation, k: Activation, v: Activation, n: number, params: RopeParams): void {
    this.rope(q, n, params);
    this.rope(k, n, params);
    this.storeKv(layer, k, v, n);
  }
}
