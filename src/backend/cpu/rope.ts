/**
 * Rotary position embedding for the plain-TS reference backend, following ggml's `ggml_rope_ext` (CPU): NORM
 * (adjacent pairs) and NEOX (half-split pairs) modes, per-dimension frequency factors (`rope_freqs`), linear scaling
 * (`freqScale`) and YaRN. Angles are computed in f64 (ggml uses f32 `powf`; the difference is < 1e-6 on logits).
 */

import type { RopeParams } from '../ops.js';
import { type RopePositions, ropeStreamOf } from '../rope-multi.js';

/** Correction range of YaRN for one boundary (ggml `ggml_rope_yarn_corr_dim`). */
function yarnCorrDim(nDims: number, nCtxOrig: number, nRot: number, base: number): number {
  return (nDims * Math.log(nCtxOrig / (nRot * 2 * Math.PI))) / (2 * Math.log(base));
}

/** [low, high] dimension range over which YaRN ramps from interpolation to extrapolation. */
function yarnCorrDims(
  nDims: number,
  nCtxOrig: number,
  base: number,
  betaFast: number,
  betaSlow: number,
): [number, number] {
  const start = Math.floor(yarnCorrDim(nDims, nCtxOrig, betaFast, base));
  const end = Math.ceil(yarnCorrDim(nDims, nCtxOrig, betaSlow, base));
  return [Math.max(0, start), Math.min(nDims - 1, end)];
}

/**
 * Cosine and sine of every rotated pair at position `pos`: `cos[at + i]`, `sin[at + i]` for pair i < nRot/2
 * (the magnitude scale of YaRN is folded in). A multi-stream rope (`params.multi`) takes pair i's position from
 * stream `ropeStreamOf(i)` of `streams` (t, h, w, e; default the text row (pos, pos, pos, 0)).
 */
export function ropeAngles(
  pos: number,
  params: RopeParams,
  cos: Float64Array,
  sin: Float64Array,
  at = 0,
  streams?: readonly [number, number, number, number],
): void {
  const half = params.nRot / 2;
  const thetaScale = Math.pow(params.theta, -2 / params.nRot);
  const yarn = params.yarn;
  const multi = params.multi;
  let corr: [number, number] = [0, 0];
  let mscale = 1;
  if (yarn) {
    corr = yarnCorrDims(params.nRot, yarn.nCtxOrig, params.theta, yarn.betaFast, yarn.betaSlow);
    mscale = yarn.attnFactor;
    if (yarn.extFactor !== 0) mscale *= 1 + 0.1 * Math.log(1 / params.freqScale);
  }
  // One theta per stream, each scaled pair by pair as ggml does (all four equal for single-position rope).
  let [t0, t1, t2, t3] = streams ?? [pos, pos, pos, multi ? 0 : pos];
  for (let i = 0; i < half; i++) {
    const s = multi ? ropeStreamOf(multi, i) : 0;
    const thetaBase = s === 0 ? t0 : s === 1 ? t1 : s === 2 ? t2 : t3;
    const factor = params.freqFactors ? params.freqFactors[i] : 1;
    const extrap = thetaBase / factor;
    const interp = params.freqScale * extrap;
    let theta = interp;
    if (yarn && yarn.extFactor !== 0) {
      // Linear ramp over the pair index i0 = 2i between the two correction dims (ggml `rope_yarn_ramp`).
      const y = (i - corr[0]) / Math.max(0.001, corr[1] - corr[0]);
      const ramp = 1 - Math.min(1, Math.max(0, y));
      const mix = ramp * yarn.extFactor;
      theta = interp * (1 - mix) + extrap * mix;
    }
    cos[at + i] = Math.cos(theta) * mscale;
    sin[at + i] = Math.sin(theta) * mscale;
    t0 *= thetaScale;
    t1 *= thetaScale;
    t2 *= thetaScale;
    t3 *= thetaScale;
  }
}

/** Stream values (t, h, w, e) of row r of a step's [4, n] `positions`. */
export function rowStreams(positions: RopePositions, r: number): [number, number, number, number] {
  const n = positions.length / 4;
  return [positions[r], positions[n + r], positions[2 * n + r], positions[3 * n + r]];
}

/**
 * Rotates `n` rows of `x` ([n, cols], cols = nHeads·headDim) in place; row r is at position `startPos + r`
 * (a multi-stream rope's row r at the streams of `positions` [4, n] when given).
 * Dimensions ≥ nRot of each head pass through unchanged.
 */
export function ropeRows(
  x: Float32Array,
  cols: number,
  n: number,
  startPos: number,
  params: RopeParams,
  positions?: RopePositions,
): void {
  const { headDim, nRot } = params;
  const half = nRot / 2;
  const nHeads = cols / headDim;
  const cos = new Float64Array(half); // [nRot/2]
  const sin = new Float64Array(half); // [nRot/2]
  for (let r = 0; r < n; r++) {
    ropeAngles(startPos + r, params, cos, sin, 0, params.multi && positions ? rowStreams(positions, r) : undefined);
    for (let h = 0; h < nHeads; h++) {
      const base = r * cols + h * headDim;
      for (let i = 0; i < half; i++) {
        // NORM rotates (2i, 2i+1); NEOX (and multi-stream) rotates (i, i + nRot/2).
        const a = params.kind === 'norm' ? base + 2 * i : base + i;
        const b = params.kind === 'norm' ? a + 1 : a + half;
        const x0 = x[a];
        const x1 = x[b];
        x[a] = x0 * cos[i] - x1 * sin[i];
        x[b] = x0 * sin[i] + x1 * cos[i];
      }
    }
  }
}
