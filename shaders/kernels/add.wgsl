// add: out = a + b over n·cols values (residual connections). Entries: `main` (three buffers) and `main_out_a`
// (out === a; the backend swaps operands when out === b). Dispatch: 1-D, (gx, gy). Reference: CpuOps.add (exact).

struct Params {
  count: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;            // (n, cols) f32
@group(0) @binding(2) var<storage, read> b: array<f32>;            // (n, cols) f32
@group(0) @binding(3) var<storage, read_write> out: array<f32>;    // (n, cols) f32

fn index(ids: Ids) -> u32 { return (ids.wg.y * ids.nwg.x + ids.wg.x) * WG_SIZE + ids.lid; }

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  let g = index(ids);
  if (g < p.count) { out[g] = a[g] + b[g]; }
}

@compute @workgroup_size(WG_SIZE)
fn main_out_a(ids: Ids) {
  let g = index(ids);
  if (g < p.count) { out[g] = out[g] + b[g]; }
}
