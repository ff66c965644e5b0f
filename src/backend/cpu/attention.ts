/**
 * Causal multi-head attention over a KV cache for the plain-TS reference backend: GQA head mapping, optional
 * attention-logit soft-capping (gemma2) and a sliding window (gemma). Scores, softmax and the weighted sum of values
 * are accumulated in f64 so this stays the yardstick for the WASM and WebGPU kernels.
 */

import { alibiSlopes } from '../alibi.js';
import type { AttentionParams } from '../ops.js';

/** One layer's cache of one slot: rows are positions, `[contextLength, nKvHeads·headDim]` each. */
export interface KvLayer {
  readonly k: Float32Array; // [contextLength, nKvHeads·headDim]
  readonly v: Float32Array; // [contextLength, nKvHeads·headDim]
}

/**
 * out[i, h·headDim …] = Σ_k softmax_k(s_ik) · V[k], with s_ik = cap·tanh(scale·q_i·K_k / cap) (or scale·q_i·K_k
 * without a cap; minus slope_h·|pos − k| with ALiBi), over positions k ≤ startPos + i inside the window. `q` and `out` are `[n, nHeads·headDim]`. With
 * `sinks` ([nHeads], gpt-oss) head h's softmax denominator also counts e^(sinks[h] − max).
 */
export function attentionRows(
  out: Float32Array,
  q: Float32Array,
  kv: KvLayer,
  n: number,
  startPos: number,
  params: AttentionParams,
  sinks: Float32Array | null = null,
): void {
  const { nHeads, nKvHeads, headDim, scale, slidingWindow, softcap } = params;
  const qCols = nHeads * headDim;
  const kvCols = nKvHeads * headDim;
  const group = nHeads / nKvHeads; // query heads per KV head
  const scores = new Float64Array(startPos + n); // [positions visible to the last row]
  const acc = new Float64Array(headDim); // [headDim]
  const slopes = params.alibiMaxBias ? alibiSlopes(nHeads, params.alibiMaxBias) : null; // [nHeads] ALiBi
  for (let i = 0; i < n; i++) {
    const pos = startPos + i;
    // A key at position k is visible iff k ≤ pos and pos − k < slidingWindow (llama.cpp's SWA mask); non-causal rows
    // also see the later positions of the step (the window still masks the earlier ones, as llama.cpp's mask), or with
    // `symmetricWindow` |pos − k| ≤ ⌊slidingWindow / 2⌋ (llama.cpp's symmetric SWA).
    const causal = params.causal !== false;
    const sym = !causal && params.symmetricWindow === true && slidingWindow > 0;
    const half = Math.floor(slidingWindow / 2);
    const first = sym ? Math.max(0, pos - half) : slidingWindow > 0 ? Math.max(0, pos - slidingWindow + 1) : 0;
    const end = startPos + n - 1;
    const last = causal ? pos : sym ? Math.min(end, pos + half) : end;
    for (let h = 0; h < nHeads; h++) {
      const qBase = i * qCols + h * headDim;
      const kvOff = Math.floor(h / group) * headDim;
      let max = -Infinity;
      for (let k = first; k <= last; k++) {
        const kBase = k * kvCols + kvOff;
        let dot = 0;
        for (let d = 0; d < headDim; d++) dot += q[qBase + d] * kv.k[kBase + d];
        let s = dot * scale;
        if (softcap > 0) s = softcap * Math.tanh(s / softcap);
        if (slopes) s -= slopes[h]! * Math.abs(pos - k);
        scores[k] = s;
        if (s > max) max = s;
      }
      const sink = sinks ? sinks[h] : -Infinity; // a key scoring `sink` with a zero value (gpt-oss)
      if (sink > max) max = sink;
      let sum = sinks ? Math.exp(sink - max) : 0;
      for (let k = first; k <= last; k++) {
        const e = Math.exp(scores[k] - max);
        scores[k] = e;
        sum += e;
      }
      acc.fill(0);
      for (let k = first; k <= last; k++) {
        const p = scores[k] / sum;
        const vBase = k * kvCols + kvOff;
        for (let d = 0; d < headDim; d++) acc[d] += p * kv.v[vBase + d];
      }
      const oBase = i * qCols + h * headDim;
      for (let d = 0; d < headDim; d++) out[oBase + d] = acc[d];
    }
  }
}
