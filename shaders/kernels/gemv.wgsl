// gemv: the hardware decode GEMV without subgroups (Firefox, Safari, the f32 path): one workgroup per weight row,
// invocations striding over K, one workgroup reduction (reduce_shared.wgsl's tree, or reduce_subgroup.wgsl) per row.
// Same fusions, Params and bindings as gemv_sg.wgsl (see there), so the host records both alike:
//   y[r] = Σ_k W[r, k]·x'[k] (x' = rmsNorm(x)·norm_w with HAS_NORM), + bias (has_bias), IS_GLU: act(gate)·up,
//   out = y or out += y (ACCUMULATE); rows ≥ split1 / split2 go to out1 / out2 (Q|K|V in one dispatch).
// Composed after a reduce_*.wgsl (Ids, WG_SIZE, wg_sum), bits.wgsl and one quant snippet (load4/load1).
// Dispatch: (gx, gy, n) workgroups, row = wg.y·gx + wg.x, token t = wg.z. f32 accumulation.
// Reference: x·Wᵀ with W dequantized by src/quant (CpuOps.matmul), NMSE.

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

fn row_dot(base: u32, xb: u32, lid: u32) -> f32 {
  let k4 = p.k & ~3u;
  var acc = 0.0;
  for (var i = lid * 4u; i < k4; i += WG_SIZE * 4u) { acc += dot(load4(base, i), x4(xb, i)); }
  for (var i = k4 + lid; i < p.k; i += WG_SIZE) { acc += load1(base, i) * x1(xb, i); }
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
fn main(ids: Ids) {
  let row = ids.wg.y * ids.nwg.x + ids.wg.x;
  let t = ids.wg.z;
  let is_live = row < p.n_rows; // uniform across the workgroup
  let xb = p.x_offset + t * p.x_stride;
  var f = 1.0;
  if (HAS_NORM) {
    var ss = 0.0;
    for (var i = ids.lid; i < p.k; i += WG_SIZE) { ss += x[xb + i] * x[xb + i]; }
    f = 1.0 / sqrt(wg_sum(ss, ids) / f32(p.k) + p.eps);
  }
  var acc = 0.0;
  var up = 0.0;
  if (is_live) {
    var base = row * p.row_stride;
    if (row >= p.split2) { base = p.w_base2 + (row - p.split2) * p.row_stride; }
    else if (row >= p.split1) { base = p.w_base1 + (row - p.split1) * p.row_stride; }
    acc = row_dot(base, xb, ids.lid);
    if (IS_GLU) { up = row_dot(p.w_base1 + row * p.row_stride, xb, ids.lid); }
  }
  var y = wg_sum(acc, ids) * f;
  if (IS_GLU) { y = act(y) * (wg_sum(up, ids) * f); }
  if (is_live && ids.lid == 0u) {
    if (p.has_bias != 0u) { y += bias[p.out_offset + row]; }
    store(t, row, y);
  }
}
