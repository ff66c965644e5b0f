// layer_norm: out = (x − mean(x)) / sqrt(var(x) + eps) · w + b over each row of `cols` values (bert's LayerNorm with
// bias); w and b (cols f32 each) optional. Entry `main` reads x and writes out; `main_inplace` works on out alone
// (out === x; WebGPU forbids a writable binding aliasing another).
// Dispatch: (1, n), one workgroup per row; the mean, then the variance of the centred values (two passes, as
// ggml_norm), each in f32 with one workgroup reduction. Reference: hostLayerNorm (f64), ggml_norm + ggml_mul + ggml_add.

struct Params {
  cols: u32,        // columns of x and out
  eps: f32,
  has_weight: u32,
  has_bias: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;           // (n, cols) f32
@group(0) @binding(2) var<storage, read_write> out: array<f32>;   // (n, cols) f32
@group(0) @binding(3) var<storage, read> weight: array<f32>;      // (cols) f32
@group(0) @binding(4) var<storage, read> bias: array<f32>;        // (cols) f32

fn affine(v: f32, j: u32) -> f32 {
  return v * select(1.0, weight[j], p.has_weight != 0u) + select(0.0, bias[j], p.has_bias != 0u);
}

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  let base = ids.wg.y * p.cols;
  var s = 0.0;
  for (var j = ids.lid; j < p.cols; j += WG_SIZE) { s += x[base + j]; }
  let mean = wg_sum(s, ids) / f32(p.cols);
  var ss = 0.0;
  for (var j = ids.lid; j < p.cols; j += WG_SIZE) { let d = x[base + j] - mean; ss += d * d; }
  let f = 1.0 / sqrt(wg_sum(ss, ids) / f32(p.cols) + p.eps);
  for (var j = ids.lid; j < p.cols; j += WG_SIZE) { out[base + j] = affine((x[base + j] - mean) * f, j); }
}

@compute @workgroup_size(WG_SIZE)
fn main_inplace(ids: Ids) {
  let base = ids.wg.y * p.cols;
  var s = 0.0;
  for (var j = ids.lid; j < p.cols; j += WG_SIZE) { s += out[base + j]; }
  let mean = wg_sum(s, ids) / f32(p.cols);
  var ss = 0.0;
  for (var j = ids.lid; j < p.cols; j += WG_SIZE) { let d = out[base + j] - mean; ss += d * d; }
  let f = 1.0 / sqrt(wg_sum(ss, ids) / f32(p.cols) + p.eps);
  for (var j = ids.lid; j < p.cols; j += WG_SIZE) { out[base + j] = affine((out[base + j] - mean) * f, j); }
}
