// gemv_id: the gather matmul over selected experts (ggml mul_mat_id) for one part of a 3-D expert stack: experts
// e_first … e_end−1, `rows` rows each, live in this binding. Row z = t·n_used + s of the output is
//   out[z, r] = Σ_k W[e, r, k]·x[xrow, k],  e = ids[z], xrow = z (X_PER_SLOT) or t,
// one workgroup per (row r, slot z); workgroups whose expert lives in another part return at once, so only the
// selected experts' rows are read. Composed after a reduce_*.wgsl (Ids, WG_SIZE, wg_sum), bits.wgsl and one quant
// snippet (load4/load1 over `weights`). Dispatch: (gx, gy, nz) workgroups, r = wg.y·gx + wg.x, z = z_offset + wg.z.
// f32 accumulation. Reference: CpuOps.matmulExperts.
// main_rows (software adapters: a CPU runs a workgroup's lanes as SIMD, and the reduction's barriers cost more than
// the row): one lane per (row r, slot z), no reduction; dispatch (gx, gy, nz) workgroups of WG_SIZE consecutive rows,
// r = (wg.y·gx + wg.x)·WG_SIZE + lid.

override X_PER_SLOT: bool = false;

struct Params {
  k: u32,            // row length (elements)
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
@group(0) @binding(1) var<storage, read> weights: array<u32>;       // ((e_end − e_first)·rows, row_stride) u32
@group(0) @binding(2) var<storage, read> x: array<f32>;             // (n or n·n_used, x_stride) f32
@group(0) @binding(3) var<storage, read_write> out: array<f32>;     // (n·n_used, out_stride) f32
@group(0) @binding(4) var<storage, read> ids: array<f32>;           // (n, n_used) expert ids as f32

@compute @workgroup_size(WG_SIZE)
fn main(gid: Ids) {
  let r = gid.wg.y * gid.nwg.x + gid.wg.x;
  let z = p.z_offset + gid.wg.z;
  let e = u32(ids[z]);
  let is_live = r < p.rows && e >= p.e_first && e < p.e_end; // the same for the whole workgroup
  var acc = 0.0;
  if (is_live) {
    var xrow = z / p.n_used;
    if (X_PER_SLOT) { xrow = z; }
    let xb = xrow * p.x_stride;
    let base = ((e - p.e_first) * p.rows + r) * p.row_stride;
    let k4 = p.k & ~3u;
    for (var i = gid.lid * 4u; i < k4; i += WG_SIZE * 4u) {
      acc += dot(load4(base, i), vec4<f32>(x[xb + i], x[xb + i + 1u], x[xb + i + 2u], x[xb + i + 3u]));
    }
    for (var i = k4 + gid.lid; i < p.k; i += WG_SIZE) { acc += load1(base, i) * x[xb + i]; }
  }
  let y = wg_sum(acc, gid);
  if (is_live && gid.lid == 0u) { out[z * p.out_stride + r] = y; }
}

@compute @workgroup_size(WG_SIZE)
fn main_rows(gid: Ids) {
  let r = (gid.wg.y * gid.nwg.x + gid.wg.x) * WG_SIZE + gid.lid;
  let z = p.z_offset + gid.wg.z;
  let e = u32(ids[z]);
  if (r >= p.rows || e < p.e_first || e >= p.e_end) { return; }
  var xrow = z / p.n_used;
  if (X_PER_SLOT) { xrow = z; }
  let xb = xrow * p.x_stride;
  let base = ((e - p.e_first) * p.rows + r) * p.row_stride;
  let k4 = p.k & ~3u;
  var acc = 0.0;
  for (var i = 0u; i < k4; i += 4u) {
    acc += dot(load4(base, i), vec4<f32>(x[xb + i], x[xb + i + 1u], x[xb + i + 2u], x[xb + i + 3u]));
  }
  for (var i = k4; i < p.k; i++) { acc += load1(base, i) * x[xb + i]; }
  out[z * p.out_stride + r] = acc;
}
