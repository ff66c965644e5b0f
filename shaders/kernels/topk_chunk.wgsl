// topk_chunk: stage 1 of GPU top-k. Workgroup c takes x[offset + c·CHUNK …] (CHUNK = 4·WG_SIZE values) into
// workgroup memory and extracts its k best in k rounds (wg_max on values, wg_min on indices among equals, so
// ties go to the lower index); writes (index, value) pairs to cand[c·k …] (index 0xffffffff when the chunk ran out).
// Dispatch: (n_chunks). Reference: CpuOps.topK. Stage 2: topk_merge.wgsl.

struct Params {
  offset: u32,
  count: u32,
  k: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;             // (rows, cols) f32
@group(0) @binding(2) var<storage, read_write> cand: array<u32>;    // (n_chunks·k, 2) index, value bits

const NONE: u32 = 0xffffffffu;
const LOWEST: f32 = -3.4e38;

var<workgroup> vals: array<f32, 1024>; // (4·WG_SIZE) the chunk
var<workgroup> taken: array<u32, 1024>; // (4·WG_SIZE) 1 once extracted or out of range

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  let c0 = ids.wg.x * 4u * WG_SIZE;
  for (var j = 0u; j < 4u; j++) {
    let u = ids.lid + j * WG_SIZE;
    let g = c0 + u;
    taken[u] = select(1u, 0u, g < p.count);
    vals[u] = select(LOWEST, x[p.offset + min(g, p.count - 1u)], g < p.count);
  }
  workgroupBarrier();
  for (var r = 0u; r < p.k; r++) {
    var best = LOWEST;
    var best_u = NONE;
    for (var j = 0u; j < 4u; j++) {
      let u = ids.lid + j * WG_SIZE;
      if (taken[u] == 0u && (best_u == NONE || vals[u] > best)) { best = vals[u]; best_u = u; }
    }
    let m = wg_max(select(best, LOWEST, best_u == NONE), ids);
    let mine = select(3.0e38, f32(best_u), best_u != NONE && best == m);
    let win = wg_min(mine, ids);
    let o = 2u * (ids.wg.x * p.k + r);
    if (win < 2.0e38) {
      let wu = u32(win);
      if (ids.lid == 0u) { cand[o] = c0 + wu; cand[o + 1u] = bitcast<u32>(vals[wu]); }
      // Each invocation only reads its own taken[] entries, so the owner marks the winner without a barrier.
      if (ids.lid == wu % WG_SIZE) { taken[wu] = 1u; }
    } else if (ids.lid == 0u) {
      cand[o] = NONE; cand[o + 1u] = bitcast<u32>(LOWEST);
    }
  }
}
