// gemv_io: what the hardware decode GEMVs (kernels/gemv.wgsl, kernels/gemv_sg.wgsl) share, so the host records
// both alike: the fusion overrides, one Params layout (src/backend/webgpu/gemv-sg-params.ts), the bindings, the
// (normed) x loads, the GLU activation and the split store.
// Composed before either kernel (compose.ts KERNEL_SNIPPETS); needs load4/load1 from the quant snippet.

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

/** The first word of weight row `row` (rows ≥ split1 / split2 start at w_base1 / w_base2). */
fn row_base(row: u32) -> u32 {
  if (row >= p.split2) { return p.w_base2 + (row - p.split2) * p.row_stride; }
  if (row >= p.split1) { return p.w_base1 + (row - p.split1) * p.row_stride; }
  return row * p.row_stride;
}

/**
 * The words [start, end) of the member holding the row at word `base` (a row-split snippet finds the row's scales
 * right-justified at `end`; shaders/common/weight_span.wgsl): members start at 0, w_base1 and w_base2 (0: none) and
 * each runs to the next one, the last to the binding's end.
 */
fn weight_span(base: u32) -> vec2<u32> {
  var s = vec2<u32>(0u, arrayLength(&weights));
  if (p.w_base1 <= base) { s.x = max(s.x, p.w_base1); } else { s.y = min(s.y, p.w_base1); }
  if (p.w_base2 <= base) { s.x = max(s.x, p.w_base2); } else { s.y = min(s.y, p.w_base2); }
  return s;
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
