// argmax: result[0] = index of the largest of x[offset … offset + count) (first one on ties), result[1] its bits.
// One workgroup: each invocation scans a strided run, then wg_max over values and wg_min over the indices that
// hold the max (indices < 2^24 are exact in f32). Dispatch: (1). Reference: CpuOps.argmax (exact).

struct Params {
  offset: u32,
  count: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;              // (rows, cols) f32
@group(0) @binding(2) var<storage, read_write> result: array<u32>;   // (2) index, value bits

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  var best = -3.4e38;
  var best_i = 0xffffffffu;
  for (var j = ids.lid; j < p.count; j += WG_SIZE) {
    let v = x[p.offset + j];
    if (best_i == 0xffffffffu || v > best) { best = v; best_i = j; }
  }
  let m = wg_max(select(best, -3.4e38, best_i == 0xffffffffu), ids);
  let cand = select(3.0e38, f32(best_i), best_i != 0xffffffffu && best == m);
  let idx = wg_min(cand, ids);
  if (ids.lid == 0u) {
    result[0] = u32(idx);
    result[1] = bitcast<u32>(m);
  }
}
