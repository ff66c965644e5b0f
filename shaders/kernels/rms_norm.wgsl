// rms_norm: out = x / sqrt(mean(x²) + eps) · w over each group of `group_size` columns (a whole row, or one head
// for per-head q/k norms); w (group_size f32) optional. Entry `main` reads x and writes out; `main_inplace`
// works on out alone (out === x; WebGPU forbids a writable binding aliasing another).
// Dispatch: (n_groups, n), one workgroup per group; sum of squares in f32 with one workgroup reduction.
// Reference: CpuOps.rmsNorm (f64 sum), ggml_rms_norm + ggml_mul.

struct Params {
  cols: u32,        // columns of x and out
  group_size: u32,
  eps: f32,
  has_weight: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;           // (n, cols) f32
@group(0) @binding(2) var<storage, read_write> out: array<f32>;   // (n, cols) f32
@group(0) @binding(3) var<storage, read> weight: array<f32>;      // (group_size) f32

fn norm_factor(ss: f32) -> f32 { return 1.0 / sqrt(ss / f32(p.group_size) + p.eps); }
fn weight_at(j: u32) -> f32 { return select(1.0, weight[j], p.has_weight != 0u); }

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  let base = ids.wg.y * p.cols + ids.wg.x * p.group_size;
  var ss = 0.0;
  for (var j = ids.lid; j < p.group_size; j += WG_SIZE) { let v = x[base + j]; ss += v * v; }
  let f = norm_factor(wg_sum(ss, ids));
  for (var j = ids.lid; j < p.group_size; j += WG_SIZE) { out[base + j] = x[base + j] * f * weight_at(j); }
}

@compute @workgroup_size(WG_SIZE)
fn main_inplace(ids: Ids) {
  let base = ids.wg.y * p.cols + ids.wg.x * p.group_size;
  var ss = 0.0;
  for (var j = ids.lid; j < p.group_size; j += WG_SIZE) { let v = out[base + j]; ss += v * v; }
  let f = norm_factor(wg_sum(ss, ids));
  for (var j = ids.lid; j < p.group_size; j += WG_SIZE) { out[base + j] = out[base + j] * f * weight_at(j); }
}
