/**
 * What every kernel over weights stored in 4-row groups (rows4-layout.ts) shares: the loop over row groups and token
 * tiles (gemvRows4) and the stores of a tile's accumulators (storeRows, storeTile). Each kernel file supplies only
 * its tile: a stateless class `K` whose @inline `run` computes group `wg` · nTok tokens (8, 4 or 1; a constant after
 * inlining) or, with `masked`, one token of a group cut by the row range. AssemblyScript has no static calls through
 * a type parameter, so `run` is called on a null `K` (it never reads `this`) and inlined: after -O3 each gemv_*_r4
 * is the same code as when every kernel carried its own copy of the loop.
 */
import { q8RowBytes } from './q8-activations';

/** Stores `acc` (rows 4g … 4g + 3) at o, or with `masked` (a constant) only its lanes lo … hi−1 (see maskedTile). */
// @ts-ignore: decorator
@inline export function storeRows(o: usize, acc: v128, masked: bool, lo: i32, hi: i32): void {
  if (!masked) {
    v128.store(o, acc);
    return;
  }
  if (lo <= 0 && 0 < hi) store<f32>(o, f32x4.extract_lane(acc, 0));
  if (lo <= 1 && 1 < hi) store<f32>(o, f32x4.extract_lane(acc, 1), 4);
  if (lo <= 2 && 2 < hi) store<f32>(o, f32x4.extract_lane(acc, 2), 8);
  if (lo <= 3 && 3 < hi) store<f32>(o, f32x4.extract_lane(acc, 3), 12);
}

/** Stores a tile's nTok (1, 4 or 8; a constant) accumulators a0 … at o, o + osb, … (storeRows each). */
// @ts-ignore: decorator
@inline export function storeTile(
  o: usize, osb: usize, nTok: i32, masked: bool, lo: i32, hi: i32,
  a0: v128, a1: v128, a2: v128, a3: v128, a4: v128, a5: v128, a6: v128, a7: v128,
): void {
  storeRows(o, a0, masked, lo, hi);
  if (nTok >= 4) {
    storeRows(o + osb, a1, masked, lo, hi);
    storeRows(o + 2 * osb, a2, masked, lo, hi);
    storeRows(o + 3 * osb, a3, masked, lo, hi);
  }
  if (nTok == 8) {
    storeRows(o + 4 * osb, a4, masked, lo, hi);
    storeRows(o + 5 * osb, a5, masked, lo, hi);
    storeRows(o + 6 * osb, a6, masked, lo, hi);
    storeRows(o + 7 * osb, a7, masked, lo, hi);
  }
}

/**
 * One token of a group cut by the row range, stored lane by lane: its own function (not inlined into gemvRows4), as
 * the masked stores inside the full tiles' function cost them a third of their speed (V8's code for them).
 */
function maskedTile<K>(wg: usize, x0: usize, xrb: usize, nb: i32, k: i32, o: usize, lo: i32, hi: i32): void {
  changetype<K>(0).run(wg, x0, xrb, nb, k, o, 0, 1, true, lo, hi);
}

/**
 * Weights in 4-row groups at w (gb bytes a group, nb the count `K.run` takes: blocks or super-blocks per row) · n Q8
 * activation rows at x → out f32 [n, outStride], rows r0 … r1−1 (any bounds: a group cut by r0 or r1 is computed
 * whole, token by token, and only its rows inside are stored, so the thread pool's chunks need not be
 * group-aligned). Tokens go 8 at a time, then 4, then one by one. Relaxed-SIMD builds only (elsewhere a trap).
 */
// @ts-ignore: decorator
@inline export function gemvRows4<K>(
  w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32, nb: i32, gb: usize,
): void {
  if (!ASC_FEATURE_RELAXED_SIMD) {
    unreachable();
    return;
  }
  const kernel = changetype<K>(0);
  const xrb = q8RowBytes(k);
  const osb = <usize>outStride << 2;
  for (let g = r0 >> 2; g < (r1 + 3) >> 2; g++) {
    const lo = max(r0 - (g << 2), 0);
    const hi = min(r1 - (g << 2), 4);
    const wg = w + <usize>g * gb;
    const og = out + (<usize>(g << 2) << 2);
    if (lo != 0 || hi != 4) {
      for (let t = 0; t < n; t++) maskedTile<K>(wg, x + <usize>t * xrb, xrb, nb, k, og + <usize>t * osb, lo, hi);
      continue;
    }
    let t = 0;
    for (; t + 8 <= n; t += 8) kernel.run(wg, x + <usize>t * xrb, xrb, nb, k, og + <usize>t * osb, osb, 8, false, 0, 4);
    for (; t + 4 <= n; t += 4) kernel.run(wg, x + <usize>t * xrb, xrb, nb, k, og + <usize>t * osb, osb, 4, false, 0, 4);
    for (; t < n; t++) kernel.run(wg, x + <usize>t * xrb, xrb, nb, k, og + <usize>t * osb, osb, 1, false, 0, 4);
  }
}
