/**
 * The reference top-k of a logits row: an insertion scan by strict `>` (so ties keep the lower index first, and a
 * value enters a full list only if it beats the current k-th). The WASM kernel `topk_f32` reproduces it exactly.
 */

import type { TopK } from '../ops.js';

/** The k largest values of `d` with their indices, highest first (ties: lower index first). */
export function topKScan(d: Float32Array, k: number): TopK {
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
