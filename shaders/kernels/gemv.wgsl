// gemv: out[t, out_offset + r] = Σ_k W[r, k]·x[t, k] (+ bias[r]) — fused dequant matrix × vector for decode.
// Composed after a reduce_*.wgsl, bits.wgsl and one quant snippet (load4/load1 over `weights`).
// Dispatch: (gx, gy, n) workgroups, one weight row per workgroup (row = wg.y·gx + wg.x), token t = wg.z.
// Each invocation accumulates a strided run of 4-element groups in f32; one workgroup reduction per row.
// Reference: x·Wᵀ with W dequantized by src/quant (CpuOps.matmul), judged by NMSE.

struct Params {
  k: u32,            // row length (elements)
  n_rows: u32,       // rows in this weight part
  row_stride: u32,   // words per repacked row
  x_stride: u32,     // columns of x
  out_stride: u32,   // columns of out
  out_offset: u32,   // first output column of this part
  has_bias: u32,
  x_offset: u32,     // first element of x row 0 (words)
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> weights: array<u32>;       // (n_rows, row_stride) u32, repacked blocks
@group(0) @binding(2) var<storage, read> x: array<f32>;             // (n, x_stride) f32
@group(0) @binding(3) var<storage, read_write> out: array<f32>;     // (n, out_stride) f32
@group(0) @binding(4) var<storage, read> bias: array<f32>;          // (out_stride) f32, read when has_bias

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  let row = ids.wg.y * ids.nwg.x + ids.wg.x;
  let t = ids.wg.z;
  let is_live = row < p.n_rows; // uniform across the workgroup
  var acc = 0.0;
  if (is_live) {
    let base = row * p.row_stride;
    let xb = p.x_offset + t * p.x_stride;
    let k4 = p.k & ~3u;
    for (var i = ids.lid * 4u; i < k4; i += WG_SIZE * 4u) {
      acc += dot(load4(base, i), vec4<f32>(x[xb + i], x[xb + i + 1u], x[xb + i + 2u], x[xb + i + 3u]));
    }
    for (var i = k4 + ids.lid; i < p.k; i += WG_SIZE) {
      acc += load1(base, i) * x[xb + i];
    }
  }
  let s = wg_sum(acc, ids);
  if (is_live && ids.lid == 0u) {
    let col = p.out_offset + row;
    out[t * p.out_stride + col] = select(s, s + bias[col], p.has_bias != 0u);
  }
}
