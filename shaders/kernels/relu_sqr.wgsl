// relu_sqr: x = max(x, 0)² in place over `count` values (Ops.reluSquared; nemotron_h's ungated MLP activation,
// llama.cpp LLM_FFN_RELU_SQR). f32. Dispatch: 1-D, (gx, gy).

struct Params {
  count: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> x: array<f32>; // (n, cols) f32

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  let i = (ids.wg.y * ids.nwg.x + ids.wg.x) * WG_SIZE + ids.lid;
  if (i >= p.count) { return; }
  let r = max(x[i], 0.0);
  x[i] = r * r;
}
