// altup: gemma3n's AltUp and activation-sparsity primitives, f32 throughout.
// Entry `main` (Ops.addScaledRows): out[t, i] += (coef[t, col] + bias) · y[t, i]; one invocation per value.
// Entry `mul_vector` (Ops.mulVector): x[t, i] ·= w[i]; one invocation per value.
// Entry `match_mag` (Ops.matchMagnitude): x[t] = x[t] · ‖target[t]‖ / ‖x[t]‖; one workgroup per row (two sums).
// Entry `gauss_topk` (Ops.gaussianTopK): x[t, i] = max(0, x[t, i] − (mean + z · std)), std over cols − 1; one
// workgroup per row (mean, then the squared deviations).
// Dispatch: main / mul_vector 1-D (gx, gy) over n·cols; match_mag / gauss_topk (1, n).
// Reference: src/backend/altup-host.ts; llama.cpp gemma3n calc_magnitude, gaussian_topk, altup_predict/correct.

struct Params {
  n: u32,
  cols: u32,
  y_cols: u32,    // columns of y / target
  coef_cols: u32, // columns of coef
  col: u32,       // the coef column
  bias: f32,      // added to the coefficient (main)
  z: f32,         // std multiplier (gauss_topk)
  pad: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;     // (n, cols) f32: out / x
@group(0) @binding(2) var<storage, read> y: array<f32>;           // (n, y_cols) f32: y / target
@group(0) @binding(3) var<storage, read> coef: array<f32>;        // (n, coef_cols) f32, or w (cols) f32

fn index(ids: Ids) -> u32 { return (ids.wg.y * ids.nwg.x + ids.wg.x) * WG_SIZE + ids.lid; }

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  let g = index(ids);
  if (g >= p.n * p.cols) { return; }
  let t = g / p.cols;
  let s = coef[t * p.coef_cols + p.col] + p.bias;
  x[g] = x[g] + s * y[t * p.y_cols + g % p.cols];
}

@compute @workgroup_size(WG_SIZE)
fn mul_vector(ids: Ids) {
  let g = index(ids);
  if (g >= p.n * p.cols) { return; }
  x[g] = x[g] * coef[g % p.cols];
}

@compute @workgroup_size(WG_SIZE)
fn match_mag(ids: Ids) {
  let t = ids.wg.y;
  let base = t * p.cols;
  let tbase = t * p.y_cols;
  var ss = 0.0;
  for (var j = ids.lid; j < p.cols; j += WG_SIZE) { let v = y[tbase + j]; ss += v * v; }
  let want = sqrt(wg_sum(ss, ids));
  var sx = 0.0;
  for (var j = ids.lid; j < p.cols; j += WG_SIZE) { let v = x[base + j]; sx += v * v; }
  let have = sqrt(wg_sum(sx, ids));
  for (var j = ids.lid; j < p.cols; j += WG_SIZE) { x[base + j] = x[base + j] * want / have; }
}

@compute @workgroup_size(WG_SIZE)
fn gauss_topk(ids: Ids) {
  let base = ids.wg.y * p.cols;
  var s = 0.0;
  for (var j = ids.lid; j < p.cols; j += WG_SIZE) { s += x[base + j]; }
  let mean = wg_sum(s, ids) / f32(p.cols);
  var ss = 0.0;
  for (var j = ids.lid; j < p.cols; j += WG_SIZE) { let d = x[base + j] - mean; ss += d * d; }
  let sd = sqrt(wg_sum(ss, ids) / f32(p.cols - 1u));
  let cutoff = mean + sd * p.z;
  for (var j = ids.lid; j < p.cols; j += WG_SIZE) { x[base + j] = max(x[base + j] - cutoff, 0.0); }
}
