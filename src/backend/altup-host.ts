/**
 * The AltUp and activation-sparsity primitives of `Ops.altUp` (gemma3n) on a host backend (cpu, wasm) whose values `view`
 * locates: per-row weighted adds, magnitude matching and gaussian top-k. Sums in f64; every stored value is f32.
 */

import type { HostView } from './delta-net.js';
import type { AltUpPrimitives } from './altup-primitives.js';
import type { Activation, Weight } from './ops.js';

/** `addScaledRows`: out[t, i] += (coef[t, col] + bias) · y[t, i] for t < n. */
function hostAddScaledRows(
  view: HostView,
  out: Activation,
  y: Activation,
  coef: Activation,
  col: number,
  bias: number,
  n: number,
): void {
  const [[o, oAt], [yd, yAt], [c, cAt]] = [view(out), view(y), view(coef)];
  const cols = out.cols;
  for (let t = 0; t < n; t++) {
    const s = Math.fround(c[cAt + t * coef.cols + col] + bias);
    const ro = oAt + t * cols;
    const ry = yAt + t * y.cols;
    for (let i = 0; i < cols; i++) o[ro + i] = Math.fround(o[ro + i] + Math.fround(s * yd[ry + i]));
  }
}

/** √(Σ v²) of one row, in f32 like ggml's sqrt(sum_rows(sqr(x))). */
function rowNorm(d: Float32Array, at: number, cols: number): number {
  let ss = 0;
  for (let i = 0; i < cols; i++) ss += d[at + i] * d[at + i];
  return Math.fround(Math.sqrt(Math.fround(ss)));
}

/** `matchMagnitude`: x[t] = x[t] · ‖target[t]‖ / ‖x[t]‖ for t < n. */
function hostMatchMagnitude(view: HostView, x: Activation, target: Activation, n: number): void {
  const [[xd, xAt], [td, tAt]] = [view(x), view(target)];
  const cols = x.cols;
  for (let t = 0; t < n; t++) {
    const rx = xAt + t * cols;
    const want = rowNorm(td, tAt + t * target.cols, cols);
    const have = rowNorm(xd, rx, cols);
    for (let i = 0; i < cols; i++) xd[rx + i] = Math.fround(Math.fround(xd[rx + i] * want) / have);
  }
}

/** `gaussianTopK`: x[t, i] = max(0, x[t, i] − (mean + z · std)) per row, std over cols − 1. */
function hostGaussianTopK(view: HostView, x: Activation, z: number, n: number): void {
  const [xd, xAt] = view(x);
  const cols = x.cols;
  for (let t = 0; t < n; t++) {
    const r = xAt + t * cols;
    let sum = 0;
    for (let i = 0; i < cols; i++) sum += xd[r + i];
    const mean = Math.fround(sum / cols);
    let ss = 0;
    for (let i = 0; i < cols; i++) {
      const d = Math.fround(xd[r + i] - mean);
      ss += d * d;
    }
    const std = Math.fround(Math.sqrt(Math.fround(Math.fround(ss) / (cols - 1))));
    const cutoff = Math.fround(mean + Math.fround(std * z));
    for (let i = 0; i < cols; i++) xd[r + i] = Math.max(0, Math.fround(xd[r + i] - cutoff));
  }
}

/** `mulVector`: x[t, i] ·= w[i] for t < n. */
function hostMulVector(view: HostView, x: Activation, w: Weight, n: number): void {
  const [[xd, xAt], [wd, wAt]] = [view(x), view(w)];
  const cols = x.cols;
  for (let t = 0; t < n; t++) {
    const r = xAt + t * cols;
    for (let i = 0; i < cols; i++) xd[r + i] = Math.fround(xd[r + i] * wd[wAt + i]);
  }
}

/** `Ops.altUp` of a host backend: values where `view` says, each written activation reported to `written`. */
export class HostAltUp implements AltUpPrimitives {
  constructor(
    private readonly view: HostView,
    private readonly written: (a: Activation) => void,
  ) {}

  addScaledRows(out: Activation, y: Activation, coef: Activation, col: number, bias: number, n: number): void {
    hostAddScaledRows(this.view, out, y, coef, col, bias, n);
    this.written(out);
  }

  matchMagnitude(x: Activation, target: Activation, n: number): void {
    hostMatchMagnitude(this.view, x, target, n);
    this.written(x);
  }

  gaussianTopK(x: Activation, z: number, n: number): void {
    hostGaussianTopK(this.view, x, z, n);
    this.written(x);
  }

  mulVector(x: Activation, w: Weight, n: number): void {
    hostMulVector(this.view, x, w, n);
    this.written(x);
  }
}
