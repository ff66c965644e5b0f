// copy_kv: copies `count` cache elements of one layer from element `src` to element `dst` (another slot) in both
// the K and the V cache (prompt-cache reuse). Source and destination ranges never overlap (different slots).
// Dispatch: 1-D, (gx, gy). Reference: CpuOps.copyKv (exact).

struct Params {
  count: u32,
  src: u32,
  dst: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> k_cache: array<F>;    // (n_slots, context_length, kv_cols) F
@group(0) @binding(2) var<storage, read_write> v_cache: array<F>;    // (n_slots, context_length, kv_cols) F

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  let g = (ids.wg.y * ids.nwg.x + ids.wg.x) * WG_SIZE + ids.lid;
  if (g >= p.count) { return; }
  k_cache[p.dst + g] = k_cache[p.src + g];
  v_cache[p.dst + g] = v_cache[p.src + g];
}
