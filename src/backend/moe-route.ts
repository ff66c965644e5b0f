/**
 * Mixture-of-experts routing of one token on the host, as ggml computes it (`build_moe_ffn`): probabilities from the
 * router logits (softmax with the max subtracted, or a sigmoid per expert), the top-k experts (highest first, ties to
 * the lower index, as a stable descending argsort), their probabilities as weights, optionally divided by their sum
 * (clamped below at 6.103515625e-5, the smallest normal f16) and scaled, then each times its expert's own scale when
 * the model has one. gpt-oss's 'softmax-weight' selects on the logits and weights the selected experts by the
 * softmax of their logits. Shared by the cpu and WASM backends.
 */

import type { MoeRouteParams } from './moe-step.js';

/** ggml's clamp of the weight sum before normalising (smallest normal f16). */
const MIN_WEIGHT_SUM = 6.103515625e-5;

/** Where `routeToken` reads and writes: f32 views (possibly the same one) and the index of this token's values. */
export interface RouteRows {
  logits: Float32Array;
  logitsAt: number;
  ids: Float32Array;
  idsAt: number;
  weights: Float32Array;
  weightsAt: number;
}

/**
 * Routes one token: reads `nExperts` logits at `logits[logitsAt …]`, writes `nUsed` expert ids and weights at
 * `ids[idsAt …]` and `weights[weightsAt …]`. `probs` is scratch of at least nExperts entries.
 */
export function routeToken(
  rows: RouteRows,
  nExperts: number,
  nUsed: number,
  params: MoeRouteParams,
  probs: Float32Array,
  bias: Float32Array | null = null,
  biasAt = 0,
  expertScale: Float32Array | null = null,
  expertScaleAt = 0,
): void {
  const { logits, logitsAt, ids, idsAt: outAt, weights, weightsAt: wAt } = rows;
  if (params.gating === 'softmax') {
    let max = -Infinity;
    for (let e = 0; e < nExperts; e++) max = Math.max(max, logits[logitsAt + e]);
    let sum = 0;
    for (let e = 0; e < nExperts; e++) {
      const p = Math.fround(Math.exp(logits[logitsAt + e] - max));
      probs[e] = p;
      sum += p;
    }
    const inv = Math.fround(1 / sum);
    for (let e = 0; e < nExperts; e++) probs[e] = Math.fround(probs[e] * inv);
  } else if (params.gating === 'sigmoid') {
    for (let e = 0; e < nExperts; e++) probs[e] = 1 / (1 + Math.exp(-logits[logitsAt + e]));
  } else {
    for (let e = 0; e < nExperts; e++) probs[e] = logits[logitsAt + e]; // softmax-weight: select on the logits
  }
  // Top-k by selection: nUsed passes over the experts (nUsed ≤ 8 in practice; no allocation).
  let total = 0;
  for (let k = 0; k < nUsed; k++) {
    let best = -1;
    let bestP = -Infinity;
    for (let e = 0; e < nExperts; e++) {
      const p = bias ? probs[e] + bias[biasAt + e] : probs[e]; // selection value; the weight stays probs[e]
      if (p > bestP && !taken(ids, outAt, k, e)) {
        best = e;
        bestP = p;
      }
    }
    if (best < 0) best = firstFree(ids, outAt, k, nExperts); // all remaining NaN: keep the ids distinct
    ids[outAt + k] = best;
    weights[wAt + k] = probs[best];
    total += probs[best];
  }
  if (params.gating === 'softmax-weight') softmaxInPlace(weights, wAt, nUsed);
  if (params.normWeights) {
    const sum = Math.max(Math.fround(total), MIN_WEIGHT_SUM);
    for (let k = 0; k < nUsed; k++) weights[wAt + k] = weights[wAt + k] / sum;
  }
  if (params.scale !== 1) for (let k = 0; k < nUsed; k++) weights[wAt + k] *= params.scale;
  if (expertScale) for (let k = 0; k < nUsed; k++) weights[wAt + k] *= expertScale[expertScaleAt + ids[outAt + k]];
}

/** v[at … at+n) = softmax of themselves (max subtracted; f32 rounding as ggml's soft_max). */
function softmaxInPlace(v: Float32Array, at: number, n: number): void {
  let max = -Infinity;
  for (let k = 0; k < n; k++) max = Math.max(max, v[at + k]);
  let sum = 0;
  for (let k = 0; k < n; k++) {
    const e = Math.fround(Math.exp(v[at + k] - max));
    v[at + k] = e;
    sum += e;
  }
  const inv = Math.fround(1 / sum);
  for (let k = 0; k < n; k++) v[at + k] = v[at + k] * inv;
}

function taken(ids: Float32Array, at: number, k: number, e: number): boolean {
  for (let j = 0; j < k; j++) if (ids[at + j] === e) return true;
  return false;
}

function firstFree(ids: Float32Array, at: number, k: number, nExperts: number): number {
  for (let e = 0; e < nExperts; e++) if (!taken(ids, at, k, e)) return e;
  return 0;
}
