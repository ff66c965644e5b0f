// gemv_sg: out[t, out_offset + r] = Σ_k W[r, k]·x[t, k] (+ bias[r]) with one subgroup per weight row — the decode
// kernel when `subgroups` exists: lanes read consecutive words of a row, one subgroupAdd, no workgroup barrier.
// A workgroup covers ROWS rows whatever the subgroup size (4 … 64): subgroup s takes rows s, s + n_sg, ….
// Composed after reduce_subgroup.wgsl (WG_SIZE), bits.wgsl and one quant snippet (load4/load1).
// Dispatch: (gx, gy, n) workgroups, rows (wg.y·gx + wg.x)·ROWS …, token t = wg.z. f32 accumulation.
// Reference: as gemv (NMSE).

const ROWS: u32 = 16u;

struct Params {
  k: u32,
  n_rows: u32,
  row_stride: u32,
  x_stride: u32,
  out_stride: u32,
  out_offset: u32,
  has_bias: u32,
  x_offset: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> weights: array<u32>;       // (n_rows, row_stride) u32, repacked blocks
@group(0) @binding(2) var<storage, read> x: array<f32>;             // (n, x_stride) f32
@group(0) @binding(3) var<storage, read_write> out: array<f32>;     // (n, out_stride) f32
@group(0) @binding(4) var<storage, read> bias: array<f32>;          // (out_stride) f32, read when has_bias

@compute @workgroup_size(WG_SIZE)
fn main(
  @builtin(local_invocation_index) lid: u32,
  @builtin(workgroup_id) wg: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(subgroup_invocation_id) lane: u32,
  @builtin(subgroup_size) sg_size: u32,
) {
  let n_sg = max(1u, WG_SIZE / sg_size);
  let sg = lid / sg_size;
  let row0 = (wg.y * nwg.x + wg.x) * ROWS;
  let t = wg.z;
  let xb = p.x_offset + t * p.x_stride;
  let k4 = p.k & ~3u;
  for (var j = 0u; j < (ROWS + n_sg - 1u) / n_sg; j++) {
    let r = sg + j * n_sg;
    let row = row0 + r;
    let is_live = r < ROWS && row < p.n_rows;
    var acc = 0.0;
    if (is_live) {
      let base = row * p.row_stride;
      for (var i = lane * 4u; i < k4; i += sg_size * 4u) {
        acc += dot(load4(base, i), vec4<f32>(x[xb + i], x[xb + i + 1u], x[xb + i + 2u], x[xb + i + 3u]));
      }
      for (var i = k4 + lane; i < p.k; i += sg_size) {
        acc += load1(base, i) * x[xb + i];
      }
    }
    let s = subgroupAdd(acc);
    if (is_live && lane == 0u) {
      let col = p.out_offset + row;
      out[t * p.out_stride + col] = select(s, s + bias[col], p.has_bias != 0u);
    }
  }
}
