// topk_radix: the k largest of x[offset … offset + count) with their indices, in one workgroup and one dispatch:
// radix select of the k-th largest order-preserving u32 key (8-bit digits from the top, a 256-bin histogram per
// pass in 8 interleaved copies against atomic contention, stopping early once the k-th's bucket is taken whole), a
// compaction of the keys above the threshold plus the lowest-index ones equal to it, then a rank sort. Writes
// result[0 … k) = indices and result[k … 2k) = value bits, by value descending, ties lower index first (as
// CpuOps.topK). −0 ranks as +0; NaN ranks below −∞ (returned only when fewer than k values are not NaN).
// Dispatch: (1). Reference: CpuOps.topK (topKScan).

struct Params {
  offset: u32,
  count: u32,
  k: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;             // (rows, cols) f32
@group(0) @binding(2) var<storage, read_write> result: array<u32>;  // (2k) indices, then value bits

const BINS: u32 = 256u;
const COPIES: u32 = 8u; // histogram copies: lanes l and l + 8 share one, so a subgroup's atomics on one bin spread 8 ways
const MAX_K: u32 = 256u;

var<workgroup> hist: array<atomic<u32>, BINS * COPIES>; // per pass: keys matching the prefix, by digit, copy minor
var<workgroup> total: array<u32, BINS>;                 // per pass: the copies summed
var<workgroup> sel: vec3<u32>;                  // prefix so far (high bits), keys still wanted, 1 = done
var<workgroup> n_gt: atomic<u32>;               // candidates above the threshold so far
var<workgroup> eq_base: array<u32, WG_SIZE>;    // (WG_SIZE) equal keys before each invocation's range
var<workgroup> cand_key: array<u32, MAX_K>;     // (k) candidate keys
var<workgroup> cand_idx: array<u32, MAX_K>;     // (k) candidate indices

/**
 * Order-preserving key from the value's bits (no float compares, so flushed subnormals cannot differ): larger value
 * → larger key; −0 → +0's key; NaN → 0, below −∞ (whose key is 0x007fffff).
 */
fn key_of(v: f32) -> u32 {
  let b = bitcast<u32>(v);
  let mag = b & 0x7fffffffu;
  if (mag > 0x7f800000u) { return 0u; }
  if (mag == 0u) { return 0x80000000u; }
  return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
}

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  let lid = ids.lid;
  if (lid == 0u) { sel = vec3<u32>(0u, p.k, 0u); atomicStore(&n_gt, 0u); }
  // Radix passes: after the pass at shift s, sel.x holds the k-th largest key's bits above s (as key >> s).
  var shift = 32u;
  for (var level = 0u; level < 4u; level++) {
    for (var b = lid; b < BINS * COPIES; b += WG_SIZE) { atomicStore(&hist[b], 0u); }
    workgroupBarrier();
    let s = 24u - 8u * level;
    let prefix = sel.x;
    for (var j = lid; j < p.count; j += WG_SIZE) {
      let key = key_of(x[p.offset + j]);
      if (level == 0u || (key >> shift) == prefix) {
        atomicAdd(&hist[((key >> s) & 0xffu) * COPIES + lid % COPIES], 1u);
      }
    }
    workgroupBarrier();
    for (var b = lid; b < BINS; b += WG_SIZE) {
      var c = 0u;
      for (var i = 0u; i < COPIES; i++) { c += atomicLoad(&hist[b * COPIES + i]); }
      total[b] = c;
    }
    workgroupBarrier();
    if (lid == 0u) {
      // The digit d whose bucket holds the wanted-th largest: keys of digits above d number less than wanted.
      var want = sel.y;
      var d = BINS - 1u;
      loop {
        let c = total[d];
        if (c >= want || d == 0u) {
          sel = vec3<u32>((prefix << 8u) | d, want, select(0u, 1u, c == want));
          break;
        }
        want -= c;
        d -= 1u;
      }
    }
    shift = s;
    let done = workgroupUniformLoad(&sel).z;
    if (done == 1u) { break; }
  }
  // Compaction: keys (>> shift) above the threshold go anywhere (n_gt < k of them); of the equal ones, the first
  // sel.y by index, each invocation taking a contiguous range so that ranks follow the index.
  let t = sel.x;
  let want = sel.y;
  let per = (p.count + WG_SIZE - 1u) / WG_SIZE;
  let j0 = min(lid * per, p.count);
  let j1 = min(j0 + per, p.count);
  var n_eq = 0u;
  for (var j = j0; j < j1; j++) {
    let key = key_of(x[p.offset + j]);
    if ((key >> shift) == t) { n_eq++; }
  }
  eq_base[lid] = n_eq;
  workgroupBarrier();
  if (lid == 0u) {
    var run = 0u;
    for (var i = 0u; i < WG_SIZE; i++) {
      let c = eq_base[i];
      eq_base[i] = run;
      run += c;
    }
  }
  workgroupBarrier();
  var rank = eq_base[lid];
  for (var j = j0; j < j1; j++) {
    let key = key_of(x[p.offset + j]);
    let hi = key >> shift;
    if (hi > t) {
      let at = atomicAdd(&n_gt, 1u);
      cand_key[at] = key;
      cand_idx[at] = j;
    } else if (hi == t) {
      if (rank < want) {
        cand_key[p.k - want + rank] = key;
        cand_idx[p.k - want + rank] = j;
      }
      rank++;
    }
  }
  workgroupBarrier();
  // Rank sort of the k candidates: key descending, index ascending (indices are distinct, so ranks are too).
  for (var i = lid; i < p.k; i += WG_SIZE) {
    let ki = cand_key[i];
    let ii = cand_idx[i];
    var r = 0u;
    for (var j = 0u; j < p.k; j++) {
      let kj = cand_key[j];
      if (kj > ki || (kj == ki && cand_idx[j] < ii)) { r++; }
    }
    result[r] = ii;
    result[p.k + r] = bitcast<u32>(x[p.offset + ii]);
  }
}
