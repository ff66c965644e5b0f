// moe_combine: the weighted sum of a mixture of experts' outputs and the shared expert's sigmoid-gated add.
// `main`:       out[t, j] = Σ_s w[t, s] · y[t·n_used + s, j]   (w = the routing weights, n_used columns)
// `main_gated`: out[t, j] += sigmoid(w[t·w_stride]) · y[t, j]    (w = the shared expert's gate logit)
// `main_bias`:  out[r, j] += y[u32(w[r]) · cols + j]              (y = per-expert biases, w = the expert ids; gpt-oss)
// Dispatch: 1-D over n·cols, (gx, gy). Reference: CpuOps.moeCombine / CpuOps.sigmoidGatedAdd.

struct Params {
  count: u32,        // n·cols
  cols: u32,         // columns of out and y
  n_used: u32,       // main: experts per token
  w_stride: u32,     // columns of w
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> y: array<f32>;             // main: (n·n_used, cols); main_gated: (n, cols) f32
@group(0) @binding(2) var<storage, read> w: array<f32>;             // (n, w_stride) f32
@group(0) @binding(3) var<storage, read_write> out: array<f32>;     // (n, cols) f32

fn index(ids: Ids) -> u32 { return (ids.wg.y * ids.nwg.x + ids.wg.x) * WG_SIZE + ids.lid; }

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  let g = index(ids);
  if (g >= p.count) { return; }
  let t = g / p.cols;
  let j = g - t * p.cols;
  var acc = 0.0;
  for (var s = 0u; s < p.n_used; s++) { acc += w[t * p.w_stride + s] * y[(t * p.n_used + s) * p.cols + j]; }
  out[g] = acc;
}

@compute @workgroup_size(WG_SIZE)
fn main_gated(ids: Ids) {
  let g = index(ids);
  if (g >= p.count) { return; }
  let t = g / p.cols;
  let gate = 1.0 / (1.0 + exp(-w[t * p.w_stride]));
  out[g] += gate * y[g];
}

@compute @workgroup_size(WG_SIZE)
fn main_bias(ids: Ids) {
  let g = index(ids);
  if (g >= p.count) { return; }
  let r = g / p.cols;
  let j = g - r * p.cols;
  out[g] += y[u32(w[r]) * p.cols + j];
}
