/**
 * The `Ops.altUp` contract: gemma3n's row-wise AltUp and sparse-gate primitives (implementations: HostAltUp in
 * altup-host.ts for cpu and wasm, AltUpOps in webgpu/altup-ops.ts).
 */

import type { Activation, Weight } from './ops.js';

/**
 * Row-wise primitives of gemma3n's AltUp streams and sparse FFN gate that no composition of the other ops expresses;
 * issued within a step like every op.
 */
export interface AltUpPrimitives {
  /** out[t, i] += (coef[t, col] + bias) · y[t, i] for t < n: a per-row weighted add whose weight is a column of coef. */
  addScaledRows(out: Activation, y: Activation, coef: Activation, col: number, bias: number, n: number): void;
  /** x[t] = x[t] · ‖target[t]‖ / ‖x[t]‖ for t < n (Euclidean norms of whole rows; target has x's columns). */
  matchMagnitude(x: Activation, target: Activation, n: number): void;
  /** x[t, i] = max(0, x[t, i] − (mean(x[t]) + z · std(x[t]))) for t < n, std with the n − 1 denominator (gaussian top-k). */
  gaussianTopK(x: Activation, z: number, n: number): void;
  /** x[t, i] ·= w[i] for t < n (w an f32 vector of x.cols). */
  mulVector(x: Activation, w: Weight, n: number): void;
}
