// scale: x = x · s in place over n·cols values; with IS_SOFTCAP, x = s · tanh(x / s) instead (gemma2 logit
// soft-capping); with IS_CLAMP, x = min(max(x, s), hi) (Ops.clamp: gemma4v's clippable linears). Dispatch: 1-D,
// (gx, gy). Reference: CpuOps.scale / CpuOps.softcap / HostHybridOps.clamp.

override IS_SOFTCAP: bool = false;
override IS_CLAMP: bool = false;

struct Params {
  count: u32,
  s: f32,
  hi: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;      // (n, cols) f32

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  let g = (ids.wg.y * ids.nwg.x + ids.wg.x) * WG_SIZE + ids.lid;
  if (g >= p.count) { return; }
  if (IS_CLAMP) {
    x[g] = min(max(x[g], p.s), p.hi);
  } else if (IS_SOFTCAP) {
    let u = x[g] / p.s;
    let e = exp(-2.0 * abs(u)); // overflow-free tanh
    x[g] = p.s * sign(u) * (1.0 - e) / (1.0 + e);
  } else {
    x[g] = x[g] * p.s;
  }
}
