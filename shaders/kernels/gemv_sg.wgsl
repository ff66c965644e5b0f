// gemv_sg: the hardware decode GEMV — one subgroup per weight row, lanes reading consecutive words of it, one
// subgroupAdd, no workgroup barrier — with the compound steps of a layer folded in:
//   y[r] = Σ_k W[r, k]·x'[k],  x' = x (or rmsNorm(x)·norm_w with HAS_NORM: the norm factor is applied to y)
//   y[r] += bias[out_offset + r] (has_bias);  IS_GLU: y[r] = act(y_gate[r])·y_up[r], up row r at w_base1 + r·stride
//   out[...] = y (or out += y with ACCUMULATE: the residual add)
// Rows [0, split1) go to `out` (column out_offset + r), [split1, split2) to `out1`, [split2, n_rows) to `out2`
// (columns r − split), their weight rows starting at words w_base1 / w_base2: Q|K|V concatenated at upload (each
// part at an aligned offset of one buffer) are one dispatch.
// A workgroup covers ROWS rows whatever the subgroup size: subgroup s takes rows s, s + n_sg, …. A subgroup wider
// than the workgroup (128-wide subgroups on some mobile GPUs; lavapipe's 8 with WG_SIZE 4) holds only WG_SIZE live
// lanes, so lanes and strides count min(subgroup_size, WG_SIZE) (issue 23: striding by subgroup_size skipped K).
// Composed after reduce_subgroup.wgsl (WG_SIZE), bits.wgsl and one quant snippet (load4/load1).
// Dispatch: (gx, gy, n) workgroups, rows (wg.y·gx + wg.x)·ROWS …, token t = wg.z. f32 accumulation.
// Reference: x·Wᵀ with W dequantized by src/quant (CpuOps.matmul), NMSE; fusions: webgpu-hardware-fused test.

override ROWS: u32 = 16u;
override HAS_NORM: bool = false;
override ACCUMULATE: bool = false;
override IS_GLU: bool = false;
override IS_GELU: bool = false;

struct Params {
  k: u32,            // row length (elements)
  n_rows: u32,       // rows in this weight part (all outputs of a concatenated weight)
  row_stride: u32,   // words per repacked row
  x_stride: u32,     // columns of x
  out_stride: u32,   // columns of out
  out_offset: u32,   // first output column of this part (and first bias element)
  has_bias: u32,
  x_offset: u32,     // first element of x row 0
  eps: f32,          // HAS_NORM
  split1: u32,       // first row written to out1 (n_rows: none)
  split2: u32,       // first row written to out2 (n_rows: none)
  out1_stride: u32,
  out2_stride: u32,
  w_base1: u32,      // word of the first row of segment 1 (IS_GLU: of the up rows)
  w_base2: u32,      // word of the first row of segment 2
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> weights: array<u32>;       // (n_rows, row_stride) u32, repacked blocks
@group(0) @binding(2) var<storage, read> x: array<f32>;             // (n, x_stride) f32
@group(0) @binding(3) var<storage, read_write> out: array<f32>;     // (n, out_stride) f32
@group(0) @binding(4) var<storage, read> bias: array<f32>;          // (out_offset + n_rows) f32, read when has_bias
@group(0) @binding(5) var<storage, read> norm_w: array<f32>;        // (k) f32, HAS_NORM
@group(0) @binding(6) var<storage, read_write> out1: array<f32>;    // (n, out1_stride) f32, rows ≥ split1
@group(0) @binding(7) var<storage, read_write> out2: array<f32>;    // (n, out2_stride) f32, rows ≥ split2

fn x4(xb: u32, i: u32) -> vec4<f32> {
  let v = vec4<f32>(x[xb + i], x[xb + i + 1u], x[xb + i + 2u], x[xb + i + 3u]);
  if (HAS_NORM) { return v * vec4<f32>(norm_w[i], norm_w[i + 1u], norm_w[i + 2u], norm_w[i + 3u]); }
  return v;
}

fn x1(xb: u32, i: u32) -> f32 {
  if (HAS_NORM) { return x[xb + i] * norm_w[i]; }
  return x[xb + i];
}

/** Σ_k W[row at base, k]·x'[k] over this lane's share (lanes live lanes, this one `lane`). */
fn row_dot(base: u32, xb: u32, lane: u32, lanes: u32) -> f32 {
  let k4 = p.k & ~3u;
  var acc = 0.0;
  for (var i = lane * 4u; i < k4; i += lanes * 4u) { acc += dot(load4(base, i), x4(xb, i)); }
  for (var i = k4 + lane; i < p.k; i += lanes) { acc += load1(base, i) * x1(xb, i); }
  return acc;
}

fn act(g: f32) -> f32 {
  if (IS_GELU) { return 0.5 * g * (1.0 + tanh(0.7978845608028654 * g * (1.0 + 0.044715 * g * g))); }
  return g / (1.0 + exp(-g));
}

fn store(t: u32, row: u32, y: f32) {
  var idx: u32;
  if (row < p.split1) {
    idx = t * p.out_stride + p.out_offset + row;
    if (ACCUMULATE) { out[idx] += y; } else { out[idx] = y; }
  } else if (row < p.split2) {
    idx = t * p.out1_stride + row - p.split1;
    if (ACCUMULATE) { out1[idx] += y; } else { out1[idx] = y; }
  } else {
    idx = t * p.out2_stride + row - p.split2;
    if (ACCUMULATE) { out2[idx] += y; } else { out2[idx] = y; }
  }
}

@compute @workgroup_size(WG_SIZE)
fn main(
  @builtin(local_invocation_index) lid: u32,
  @builtin(workgroup_id) wg: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(subgroup_invocation_id) lane: u32,
  @builtin(subgroup_size) sg_size: u32,
) {
  let lanes = min(sg_size, WG_SIZE); // live lanes of a subgroup
  let n_sg = max(1u, WG_SIZE / lanes);
  let sg = lid / lanes;
  let row0 = (wg.y * nwg.x + wg.x) * ROWS;
  let t = wg.z;
  let xb = p.x_offset + t * p.x_stride;
  var f = 1.0;
  if (HAS_NORM) {
    var ss = 0.0;
    for (var i = lane; i < p.k; i += lanes) { ss += x[xb + i] * x[xb + i]; }
    f = 1.0 / sqrt(subgroupAdd(ss) / f32(p.k) + p.eps);
  }
  for (var j = 0u; j < (ROWS + n_sg - 1u) / n_sg; j++) {
    let r = sg + j * n_sg;
    let row = row0 + r;
    let is_live = r < ROWS && row < p.n_rows;
    var acc = 0.0;
    var up = 0.0;
    if (is_live) {
      var base = row * p.row_stride;
      if (row >= p.split2) { base = p.w_base2 + (row - p.split2) * p.row_stride; }
      else if (row >= p.split1) { base = p.w_base1 + (row - p.split1) * p.row_stride; }
      acc = row_dot(base, xb, lane, lanes);
      if (IS_GLU) { up = row_dot(p.w_base1 + row * p.row_stride, xb, lane, lanes); }
    }
    var y = subgroupAdd(acc) * f;
    if (IS_GLU) { y = act(y) * (subgroupAdd(up) * f); }
    if (is_live && lane == 0u) {
      if (p.has_bias != 0u) { y += bias[p.out_offset + row]; }
      store(t, row, y);
    }
  }
}
