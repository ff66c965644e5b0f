/**
 * CPU-side RoPE constants for shaders/kernels/rope.wgsl: the per-pair inverse frequencies (f64, then rounded once
 * to f32 — more exact than a GPU `pow`) and the YaRN correction range and magnitude scale, as ggml's
 * `ggml_rope_yarn_corr_dims` / `rope_yarn` define them (and src/backend/cpu/rope.ts computes them).
 */

import type { RopeParams } from '../ops.js';

/** inv_freq[i] = theta^(−2i/nRot) / freqFactors[i] for the nRot/2 rotated pairs. */
export function ropeInverseFrequencies(params: RopeParams): Float32Array<ArrayBuffer> {
  const half = params.nRot / 2;
  const inv = new Float32Array(half); // (nRot/2) f32
  const thetaScale = Math.pow(params.theta, -2 / params.nRot);
  for (let i = 0; i < half; i++) inv[i] = Math.pow(thetaScale, i) / (params.freqFactors ? params.freqFactors[i]! : 1);
  return inv;
}

/** YaRN uniforms: correction dims [lo, hi], extrapolation mix and magnitude scale (identity without YaRN). */
export function ropeYarnUniforms(params: RopeParams): {
  corrLo: number;
  corrHi: number;
  extFactor: number;
  mscale: number;
} {
  const yarn = params.yarn;
  if (!yarn) return { corrLo: 0, corrHi: 0, extFactor: 0, mscale: 1 };
  const corrDim = (beta: number): number =>
    (params.nRot * Math.log(yarn.nCtxOrig / (beta * 2 * Math.PI))) / (2 * Math.log(params.theta));
  return {
    corrLo: Math.max(0, Math.floor(corrDim(yarn.betaFast))),
    corrHi: Math.min(params.nRot - 1, Math.ceil(corrDim(yarn.betaSlow))),
    extFactor: yarn.extFactor,
    mscale: yarn.attnFactor * (yarn.extFactor !== 0 ? 1 + 0.1 * Math.log(1 / params.freqScale) : 1),
  };
}
