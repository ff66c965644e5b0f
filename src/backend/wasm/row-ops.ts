/**
 * The WASM backend's light ops, as tight loops over an f32 view of the WASM memory (indices are f32 element
 * offsets, not bytes): norm, add, scale, softcap and rope (with cos/sin tables cached per step). Argmax and top-k,
 * which scan the whole vocabulary every token, are WASM kernels (wasm/assembly/argmax.ts).
 * They cost microseconds per decode step next to the matvecs, so they stay in TypeScript; each mirrors the
 * reference backend's formula (backend/cpu/cpu-ops.ts) exactly.
 */

import { ropeAngles, rowStreams } from '../cpu/rope.js';
import type { RopePositions } from '../rope-multi.js';
import type { RopeParams } from '../ops.js';
import type { AddRow } from '../expert-bias.js';

/**
 * RMS-normalises `groups` consecutive groups of `g` values from `src` into `dst` (may alias), times w[0 … g) when
 * `w` ≥ 0. Sum of squares in f64.
 */
export function rmsNormRows(
  f32: Float32Array,
  dst: number,
  src: number,
  w: number,
  g: number,
  groups: number,
  eps: number,
): void {
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

/** dst[i] = a[i] + b[i] for i < len (any aliasing). */
export function addRows(f32: Float32Array, dst: number, a: number, b: number, len: number): void {
  for (let i = 0; i < len; i++) f32[dst + i] = f32[a + i] + f32[b + i];
}

/**
 * out[i, r] += bias[r] for rows i < n of an activation `cols` wide (f32 indices), r < nRows; each row through the
 * SIMD `addRow` when given (expert-bias-rows.ts: the same f32 sums), else a plain-TS loop.
 */
export function addBiasRows(
  f32: Float32Array,
  out: number,
  cols: number,
  bias: number,
  nRows: number,
  n: number,
  addRow: AddRow | null = null,
): void {
  for (let i = 0; i < n; i++) {
    const row = out + i * cols;
    if (addRow) addRow(row, bias, nRows);
    else for (let r = 0; r < nRows; r++) f32[row + r] += f32[bias + r];
  }
}

/** x[i] *= s for i < len. */
export function scaleRows(f32: Float32Array, x: number, s: number, len: number): void {
  for (let i = 0; i < len; i++) f32[x + i] *= s;
}

/** x[i] = cap · tanh(x[i] / cap) for i < len. */
export function softcapRows(f32: Float32Array, x: number, cap: number, len: number): void {
  for (let i = 0; i < len; i++) f32[x + i] = cap * Math.tanh(f32[x + i] / cap);
}

/** One parameter set's cos/sin [n, nRot/2] (f64) of a step's rows, and the positions they were computed for. */
interface RopeTableEntry {
  startPos: number;
  n: number;
  cos: Float64Array;
  sin: Float64Array;
  positions: RopePositions | undefined;
}

/**
 * Rotary-embedding cos/sin tables of the step's positions, shared by q and k and by every layer with the same rope
 * parameters (they depend only on position and parameters). Angles come from the reference backend's `ropeAngles`.
 */
export class RopeTables {
  private readonly entries = new Map<string, RopeTableEntry>();
  private readonly keys = new WeakMap<RopeParams, string>(); // rope params are built once per model: key them once
  private readonly factorIds = new WeakMap<Float32Array, number>();
  private nextFactorId = 0;

  /**
   * cos/sin [n, nRot/2] for positions startPos … startPos+n−1 (the arrays may be longer), or a multi-stream rope's
   * `positions` [4, n]. A decode step refills the previous step's arrays in place: nothing is allocated per token.
   */
  get(
    params: RopeParams,
    startPos: number,
    n: number,
    positions?: RopePositions,
  ): { cos: Float64Array; sin: Float64Array } {
    const streams = params.multi ? positions : undefined; // single-position rope ignores the streams
    let key = this.keys.get(params);
    if (key === undefined) {
      key = this.key(params);
      this.keys.set(params, key);
    }
    let entry = this.entries.get(key);
    if (entry && entry.startPos === startPos && entry.n >= n && entry.positions === streams) return entry;
    const half = params.nRot / 2;
    if (!entry || entry.cos.length < n * half) {
      if (this.entries.size > 16) this.entries.clear();
      entry = { startPos, n, cos: new Float64Array(n * half), sin: new Float64Array(n * half), positions: streams };
      this.entries.set(key, entry);
    }
    for (let r = 0; r < n; r++) {
      ropeAngles(startPos + r, params, entry.cos, entry.sin, r * half, streams && rowStreams(streams, r));
    }
    entry.startPos = startPos;
    entry.positions = streams;
    entry.n = n;
    return entry;
  }

  private key(p: RopeParams): string {
    let f = 0; // identity of the frequency-factor array (0 = none)
    if (p.freqFactors) {
      f = this.factorIds.get(p.freqFactors) ?? ++this.nextFactorId;
      this.factorIds.set(p.freqFactors, f);
    }
    const y = p.yarn;
    const m = p.multi ? `${p.multi.sections.join(',')}${p.multi.interleaved ? 'i' : ''}` : '';
    return `${m}|${p.nRot}|${p.theta}|${p.freqScale}|${f}|${y ? `${y.extFactor},${y.attnFactor},${y.betaFast},${y.betaSlow},${y.nCtxOrig}` : ''}`;
  }
}

/**
 * Rotates n rows of `cols` values at f32 index `x` in place (heads of `headDim`; pairs (2i, 2i+1) for 'norm',
 * (i, i + nRot/2) for 'neox'; dimensions ≥ nRot pass through), with tables from `RopeTables.get`.
 */
export function ropeRotate(
  f32: Float32Array,
  x: number,
  cols: number,
  n: number,
  params: RopeParams,
  cos: Float64Array,
  sin: Float64Array,
): void {
  const { headDim, nRot } = params;
  const half = nRot / 2;
  const isNorm = params.kind === 'norm';
  for (let r = 0; r < n; r++) {
    const t = r * half;
    for (let base = x + r * cols; base < x + (r + 1) * cols; base += headDim) {
      for (let i = 0; i < half; i++) {
        const a = isNorm ? base + 2 * i : base + i;
        const b = isNorm ? a + 1 : a + half;
        const x0 = f32[a];
        const x1 = f32[b];
        f32[a] = x0 * cos[t + i] - x1 * sin[t + i];
        f32[b] = x0 * sin[t + i] + x1 * cos[t + i];
      }
    }
  }
}
