// topk_merge: stage 2 of GPU top-k. One workgroup extracts the k best of the n_cand (index, value) candidates of
// topk_chunk.wgsl, in k rounds (ties: lower index first), marking winners in place, and writes result[0 … k) =
// indices, result[k … 2k) = value bits. Dispatch: (1). Reference: CpuOps.topK.

struct Params {
  n_cand: u32,
  k: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> cand: array<u32>;    // (n_cand, 2) index, value bits
@group(0) @binding(2) var<storage, read_write> result: array<u32>;  // (2k) indices, then value bits

const NONE: u32 = 0xffffffffu;
const LOWEST: f32 = -3.4e38;

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  for (var r = 0u; r < p.k; r++) {
    var best = LOWEST;
    var best_i = NONE; // vocabulary index of this invocation's best
    for (var j = ids.lid; j < p.n_cand; j += WG_SIZE) {
      let idx = cand[2u * j];
      let v = bitcast<f32>(cand[2u * j + 1u]);
      if (idx != NONE && (best_i == NONE || v > best || (v == best && idx < best_i))) { best = v; best_i = idx; }
    }
    let m = wg_max(select(best, LOWEST, best_i == NONE), ids);
    let win = wg_min(select(3.0e38, f32(best_i), best_i != NONE && best == m), ids);
    if (win < 2.0e38) {
      let wi = u32(win);
      for (var j = ids.lid; j < p.n_cand; j += WG_SIZE) {
        if (cand[2u * j] == wi) { cand[2u * j] = NONE; }
      }
      if (ids.lid == 0u) { result[r] = wi; result[p.k + r] = bitcast<u32>(m); }
    } else if (ids.lid == 0u) {
      result[r] = NONE; result[p.k + r] = bitcast<u32>(LOWEST);
    }
    storageBarrier();
    workgroupBarrier();
  }
}
