// copy_rows: out[dst … dst + count) = x[src … src + count) (e.g. the last row before the lm head). Entry `main_same`
// copies within `out` alone (out === x, ranges not overlapping). Dispatch: 1-D, (gx, gy). Reference: CpuOps.copyRows (exact).

struct Params {
  count: u32,
  src: u32,
  dst: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;            // (maxRows, cols) f32
@group(0) @binding(2) var<storage, read_write> out: array<f32>;    // (maxRows, cols) f32

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  let g = (ids.wg.y * ids.nwg.x + ids.wg.x) * WG_SIZE + ids.lid;
  if (g < p.count) { out[p.dst + g] = x[p.src + g]; }
}

@compute @workgroup_size(WG_SIZE)
fn main_same(ids: Ids) {
  let g = (ids.wg.y * ids.nwg.x + ids.wg.x) * WG_SIZE + ids.lid;
  if (g < p.count) { out[p.dst + g] = out[p.src + g]; }
}
