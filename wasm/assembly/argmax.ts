/**
 * Picking from a logits row: greedy (argmax) and the top-k candidates for sampling.
 */

/**
 * Index of the largest of n f32 values at `x` (greedy sampling over the logits), with the semantics of a scalar
 * scan `if (d[j] > d[best]) best = j` from best = 0: the first index on ties, NaN never wins (but a NaN at index 0
 * is never displaced), and 0 when nothing beats d[0]. SIMD builds keep four lanes of (max, index) — each lane's own
 * strict `>` keeps its first occurrence — then pick the largest lane, lowest index on ties.
 */
export function argmax_f32(x: usize, n: i32): i32 {
  if (n <= 0) return 0;
  const first = load<f32>(x);
  if (isNaN(first)) return 0;
  let best = 0;
  let bestV = first;
  let j = 1;
  if (ASC_FEATURE_SIMD && n >= 8) {
    let mv = f32x4.splat(-Infinity);
    let mi = i32x4.splat(-1);
    let idx = i32x4(0, 1, 2, 3);
    const four = i32x4.splat(4);
    j = n & ~3;
    for (let i = 0; i < j; i += 4) {
      const v = v128.load(x + (<usize>i << 2));
      const gt = f32x4.gt(v, mv);
      mv = v128.bitselect(v, mv, gt);
      mi = v128.bitselect(idx, mi, gt);
      idx = i32x4.add(idx, four);
    }
    best = -1;
    bestV = -Infinity;
    for (let l = 0; l < 4; l++) {
      const i = l == 0 ? i32x4.extract_lane(mi, 0) : l == 1 ? i32x4.extract_lane(mi, 1) : l == 2 ? i32x4.extract_lane(mi, 2) : i32x4.extract_lane(mi, 3);
      if (i < 0) continue;
      const v = load<f32>(x + (<usize>i << 2));
      if (v > bestV || (v == bestV && i < best)) {
        bestV = v;
        best = i;
      }
    }
    // Nothing above −∞ in the vector part: every value there is −∞ or NaN, and the scan keeps index 0.
    if (best < 0 || !(bestV > first)) {
      best = 0;
      bestV = first;
    }
  }
  for (; j < n; j++) {
    const v = load<f32>(x + (<usize>j << 2));
    if (v > bestV) {
      bestV = v;
      best = j;
    }
  }
  return best;
}

/**
 * The k largest of n f32 values at `x`, highest first (ties: lower index first), as i32 indices written to `ids`
 * (k slots); returns how many (min(k, n)). The semantics of the reference backends' insertion scan — the first k
 * values enter in order (a NaN among them sorts after everything it meets), then a value enters only if it is
 * greater than the current k-th — with the SIMD builds skipping four values at a time while none of them is.
 */
export function topk_f32(x: usize, n: i32, k: i32, ids: usize): i32 {
  const m = max(0, min(k, n));
  let len = 0;
  let j = 0;
  while (j < n) {
    const v = load<f32>(x + (<usize>j << 2));
    if (len == m) {
      if (m == 0) break;
      const kth = load<f32>(x + (<usize>load<i32>(ids + (<usize>(m - 1) << 2)) << 2));
      if (!(v > kth)) {
        j++;
        if (ASC_FEATURE_SIMD) {
          const tv = f32x4.splat(kth);
          while (j + 4 <= n && !v128.any_true(f32x4.gt(v128.load(x + (<usize>j << 2)), tv))) j += 4;
        }
        continue;
      }
    }
    let p = len;
    while (p > 0 && v > load<f32>(x + (<usize>load<i32>(ids + (<usize>(p - 1) << 2)) << 2))) p--;
    for (let q = len < m ? len : m - 1; q > p; q--) store<i32>(ids + (<usize>q << 2), load<i32>(ids + (<usize>(q - 1) << 2)));
    store<i32>(ids + (<usize>p << 2), j);
    if (len < m) len++;
    j++;
  }
  return len;
}
