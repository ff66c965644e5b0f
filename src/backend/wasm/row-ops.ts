/**
 * The WASM backend's light elementwise ops, as tight loops over an f32 view of the WASM memory (indices are f32
 * element offsets, not bytes). They cost microseconds per decode step next to the matvecs, so they stay in
 * TypeScript; each mirrors the reference backend's formula (backend/cpu/cpu-ops.ts) exactly.
 */

import type { GluActivation, TopK } from '../ops.js';

/** √(2/π), the constant of the tanh approximation of GELU (llama.cpp's `ggml_gelu`). */
const GELU_COEF = Math.sqrt(2 / Math.PI);

/**
 * RMS-normalises `groups` consecutive groups of `g` values from `src` into `dst` (may alias), times w[0 … g) when
 * `w` ≥ 0. Sum of squares in f64.
 */
export function rmsNormRows(f32: Float32Array, dst: number, src: number, w: number, g: number, groups: number, eps: number): void {
  for (let r = 0; r < groups; r++) {
    const s = src + r * g;
    const d = dst + r * g;
    let sum = 0;
    for (let j = 0; j < g; j++) sum += f32[s + j] * f32[s + j];
    const inv = 1 / Math.sqrt(sum / g + eps);
    if (w < 0) for (let j = 0; j < g; j++) f32[d + j] = f32[s + j] * inv;
    else for (let j = 0; j < g; j++) f32[d + j] = f32[s + j] * inv * f32[w + j];
  }
}

/** dst[i] = act(gate[i]) · up[i] for i < len: SiLU x·σ(x), or GELU 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). */
export function gluRows(f32: Float32Array, dst: number, gate: number, up: number, len: number, act: GluActivation): void {
  if (act === 'silu') {
    for (let i = 0; i < len; i++) {
      const x = f32[gate + i];
      f32[dst + i] = (x / (1 + Math.exp(-x))) * f32[up + i];
    }
  } else {
    for (let i = 0; i < len; i++) {
      const x = f32[gate + i];
      f32[dst + i] = 0.5 * x * (1 + Math.tanh(GELU_COEF * x * (1 + 0.044715 * x * x))) * f32[up + i];
    }
  }
}

/** dst[i] = a[i] + b[i] for i < len (any aliasing). */
export function addRows(f32: Float32Array, dst: number, a: number, b: number, len: number): void {
  for (let i = 0; i < len; i++) f32[dst + i] = f32[a + i] + f32[b + i];
}

/** x[i] *= s for i < len. */
export function scaleRows(f32: Float32Array, x: number, s: number, len: number): void {
  for (let i = 0; i < len; i++) f32[x + i] *= s;
}

/** x[i] = cap · tanh(x[i] / cap) for i < len. */
export function softcapRows(f32: Float32Array, x: number, cap: number, len: number): void {
  for (let i = 0; i < len; i++) f32[x + i] = cap * Math.tanh(f32[x + i] / cap);
}

/** Index of the largest value of `d` (first one on ties). */
export function argmaxOf(d: Float32Array): number {
  let best = 0;
  for (let j = 1; j < d.length; j++) if (d[j] > d[best]) best = j;
  return best;
}

/** The k largest values of `d` with their indices, highest first (ties: lower index first). */
export function topKOf(d: Float32Array, k: number): TopK {
  const m = Math.max(0, Math.min(k, d.length));
  const ids: number[] = []; // sorted by value desc, then index asc
  for (let j = 0; j < d.length; j++) {
    if (ids.length === m && !(d[j] > d[ids[m - 1]])) continue;
    let p = ids.length;
    while (p > 0 && d[j] > d[ids[p - 1]]) p--;
    ids.splice(p, 0, j);
    if (ids.length > m) ids.pop();
  }
  return { ids: Int32Array.from(ids), logits: Float32Array.from(ids, (j) => d[j]) };
}
