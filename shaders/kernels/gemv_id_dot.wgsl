// gemv_id_dot: gemv_id's software-adapter form (see gemv_id.wgsl: the gather matmul over selected experts, ggml
// mul_mat_id) for weight types with a fast block product and K a multiple of 32:
//   out[z, r] = Σ_k W[e, r, k]·x[xrow, k],  e = ids[z], xrow = z (X_PER_SLOT) or z / n_used.
// One lane per (row r, slot z), no reduction; each 32-element block goes through `dot32` (shaders/quant/*_dot32.wgsl,
// its scales unpacked once per block instead of per load4). All lanes of a workgroup share the slot and so the x
// row: per block lane l loads x's vec4 (l & 7) once and subgroupBroadcast hands the eight to every lane, as in
// gemv_bcast (a CPU "GPU" turns a per-lane load of x into per-lane scalar loads); subgroups smaller than 8 load x
// per lane. Rows are clamped so every lane runs the broadcasts. Composed with reduce_subgroup.wgsl (Ids with the
// subgroup builtins: needs the `subgroups` feature), bits.wgsl, the quant snippet and its dot32.
// Dispatch: (gx, gy, nz) workgroups of WG_SIZE consecutive rows, r = (wg.y·gx + wg.x)·WG_SIZE + lid,
// z = z_offset + wg.z; a workgroup whose expert lives in another part returns at once.
// Reference: CpuOps.matmulExperts.

override X_PER_SLOT: bool = false;
override FORCE_DIRECT: bool = false; // tests: take the per-lane x path of subgroups smaller than 8

struct Params {
  k: u32,            // row length (elements, a multiple of 32)
  rows: u32,         // rows of one expert
  row_stride: u32,   // words per repacked row
  x_stride: u32,     // columns of x
  out_stride: u32,   // columns of out
  n_used: u32,       // experts per token (columns of ids)
  e_first: u32,      // first expert in this part
  e_end: u32,        // one past the last expert in this part
  z_offset: u32,     // first output row of this dispatch
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> weights: array<u32>;        // ((e_end − e_first)·rows, row_stride) u32
@group(0) @binding(2) var<storage, read> x: array<f32>;              // (n or n·n_used, x_stride) f32
@group(0) @binding(3) var<storage, read_write> out: array<f32>;      // (n·n_used, out_stride) f32
@group(0) @binding(4) var<storage, read> ids: array<f32>;            // (n, n_used) expert ids as f32
@group(0) @binding(5) var<storage, read> weights4: array<vec4<u32>>; // `weights` again, as vec4 (fast dot32 forms)

fn x4(i: u32) -> vec4<f32> {
  return vec4<f32>(x[i], x[i + 1u], x[i + 2u], x[i + 3u]);
}

// ids[z] is the same for the whole workgroup, so its early return leaves the broadcasts in uniform control flow.
@diagnostic(off, subgroup_uniformity)
@compute @workgroup_size(WG_SIZE)
fn main(gid: Ids) {
  let r = (gid.wg.y * gid.nwg.x + gid.wg.x) * WG_SIZE + gid.lid;
  let z = p.z_offset + gid.wg.z;
  let e = u32(ids[z]);
  if (e < p.e_first || e >= p.e_end) { return; }
  var xrow = z / p.n_used;
  if (X_PER_SLOT) { xrow = z; }
  let xb = xrow * p.x_stride;
  let base = ((e - p.e_first) * p.rows + min(r, p.rows - 1u)) * p.row_stride;
  let is_bcast = gid.sg_size >= 8u && !FORCE_DIRECT;
  var acc = 0.0;
  for (var b = 0u; b < p.k / 32u; b++) {
    let i = xb + b * 32u;
    var x0: vec4<f32>; var x1: vec4<f32>; var x2: vec4<f32>; var x3: vec4<f32>;
    var x4v: vec4<f32>; var x5: vec4<f32>; var x6: vec4<f32>; var x7: vec4<f32>;
    if (is_bcast) {
      let xv = x4(i + 4u * (gid.sg_lane & 7u));
      x0 = subgroupBroadcast(xv, 0u);
      x1 = subgroupBroadcast(xv, 1u);
      x2 = subgroupBroadcast(xv, 2u);
      x3 = subgroupBroadcast(xv, 3u);
      x4v = subgroupBroadcast(xv, 4u);
      x5 = subgroupBroadcast(xv, 5u);
      x6 = subgroupBroadcast(xv, 6u);
      x7 = subgroupBroadcast(xv, 7u);
    } else {
      x0 = x4(i);
      x1 = x4(i + 4u);
      x2 = x4(i + 8u);
      x3 = x4(i + 12u);
      x4v = x4(i + 16u);
      x5 = x4(i + 20u);
      x6 = x4(i + 24u);
      x7 = x4(i + 28u);
    }
    let s4 = (x0 + x1) + (x2 + x3) + (x4v + x5) + (x6 + x7);
    acc += dot32(base, b, x0, x1, x2, x3, x4v, x5, x6, x7, s4.x + s4.y + s4.z + s4.w);
  }
  if (r < p.rows) { out[z * p.out_stride + r] = acc; }
}
