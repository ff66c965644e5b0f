// gemv_sg: the hardware decode GEMV with subgroups, with the compound steps of a layer folded in:
//   y[r] = Σ_k W[r, k]·x'[k],  x' = x (or rmsNorm(x)·norm_w with HAS_NORM: the norm factor is applied to y)
//   y[r] += bias[out_offset + r] (has_bias);  IS_GLU: y[r] = act(y_gate[r])·y_up[r], up row r at w_base1 + r·stride
//   out[...] = y (or out += y with ACCUMULATE: the residual add)
// Rows [0, split1) go to `out` (column out_offset + r), [split1, split2) to `out1`, [split2, n_rows) to `out2`
// (columns r − split), their weight rows starting at words w_base1 / w_base2: Q|K|V concatenated at upload (each
// part at an aligned offset of one buffer) are one dispatch.
// Work split: a workgroup covers ROWS rows, in ROWS / R row groups of R rows. A subgroup takes one row group at a
// time and walks K in 32-element chunks, lane l taking chunks l, l + lanes, …: it loads the chunk's x' once (eight
// vec4 kept in registers) and dots it with the R rows (the quant snippet's dot_chunk: a block's words loaded once
// as one contiguous span, its scale decoded once: row-split scales from each row's scale_origin, found once per
// row group). Subgroups beyond the row groups split K between them (split-K:
// ksplit subgroups per row group, partial sums combined in workgroup memory). A subgroup wider than the workgroup
// (128-wide subgroups on some mobile GPUs; lavapipe's 8 with WG_SIZE 4) holds only WG_SIZE live lanes, so lanes and
// strides count min(subgroup_size, WG_SIZE) (issue 23: striding by subgroup_size skipped K).
// The host model of these addresses: test/kernels/gemv-sg-lanes.test.ts (keep in step with this file).
// Composed after reduce_subgroup.wgsl (WG_SIZE), bits.wgsl, one quant snippet (load4/load1, dot_chunk, or
// common/dot_chunk.wgsl after it; then common/x_q8.wgsl with the snippet's dot_chunk_q8, or common/x_q8_none.wgsl)
// and common/gemv_io.wgsl (overrides but ROWS/K, Params, bindings, x4/x1, act, store).
// Dispatch: (gx, gy, n) workgroups, rows (wg.y·gx + wg.x)·ROWS …, token t = wg.z. f32 accumulation.
// Reference: x·Wᵀ with W dequantized by src/quant (CpuOps.matmul), NMSE; fusions: webgpu-hardware-fused test.

override ROWS: u32 = 8u; // rows per workgroup, a multiple of R
override K: u32 = 0u; // row length fixed at pipeline creation (constant loop bounds); 0: p.k
const MAX_R: u32 = 4u; // register arrays of a row group
override R: u32 = 4u; // rows one subgroup dots with each chunk of x' (≤ MAX_R; the host sets 1 for types without
// a fast dot_chunk, whose generic chunk — eight inlined K-quant decodes — would make R copies too big to compile well)
// Q8 activations (llama.cpp's Q8_0 dot semantics, where the adapter has packed 4×8-bit integer dot products): each
// chunk of x' quantised to int8 once per row group (common/x_q8.wgsl) and dotted with the rows by the snippet's
// dot_chunk_q8 (dot4I8Packed); the host sets it for the types with one (gemv-sg-quant.ts), else x_q8_none stands in.
override Q8_X: bool = false;

// (ksplit, ROWS, 2) partial sums, gate and up: ksplit ≤ WG_SIZE / 4 (subgroups have ≥ 4 lanes)
var<workgroup> part: array<f32, 2u * ROWS * max(1u, WG_SIZE / 4u)>;

/** x' of the 32 elements of chunk c. */
fn x_chunk(xb: u32, c: u32) -> array<vec4<f32>, 8> {
  let i = c * 32u;
  return array<vec4<f32>, 8>(x4(xb, i), x4(xb, i + 4u), x4(xb, i + 8u), x4(xb, i + 12u), x4(xb, i + 16u),
    x4(xb, i + 20u), x4(xb, i + 24u), x4(xb, i + 28u));
}

@compute @workgroup_size(WG_SIZE)
fn main(
  @builtin(local_invocation_index) lid: u32,
  @builtin(workgroup_id) wg: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(subgroup_invocation_id) lane: u32,
  @builtin(subgroup_size) sg_size: u32,
) {
  let k = select(p.k, K, K != 0u);
  let lanes = min(sg_size, WG_SIZE); // live lanes of a subgroup
  let n_sg = max(1u, WG_SIZE / lanes);
  let sg = lid / lanes;
  let n_groups = ROWS / R;
  let ksplit = max(1u, n_sg / n_groups); // subgroups sharing one row group's K
  let kpart = sg / n_groups; // this subgroup's share of K (0 when subgroups walk several row groups)
  let row0 = (wg.y * nwg.x + wg.x) * ROWS;
  let t = wg.z;
  let xb = p.x_offset + t * p.x_stride;
  var f = 1.0;
  if (HAS_NORM) {
    var ss = 0.0;
    for (var i = lane; i < k; i += lanes) { ss += x[xb + i] * x[xb + i]; }
    f = 1.0 / sqrt(subgroupAdd(ss) / f32(k) + p.eps);
  }
  let nc = k / 32u; // whole chunks; the rest (float types only) element by element
  let kl = kpart * lanes + lane;
  let kstride = ksplit * lanes;
  for (var j = 0u; j < (n_groups + n_sg - 1u) / n_sg; j++) {
    let g = sg % n_groups + j * n_sg;
    let is_live = g < n_groups && kpart < ksplit;
    var acc = array<f32, MAX_R>();
    var up = array<f32, MAX_R>();
    if (is_live) {
      let first = row0 + g * R;
      let nr = select(0u, min(R, p.n_rows - first), first < p.n_rows); // rows of this group that exist
      var bases: array<u32, MAX_R>;
      var ubases: array<u32, MAX_R>;
      var scales: array<u32, MAX_R>; // the rows' scale origins (row-split layouts: scales in their own region)
      var uscales: array<u32, MAX_R>;
      for (var r = 0u; r < R; r++) {
        bases[r] = row_base(first + r);
        ubases[r] = p.w_base1 + (first + r) * p.row_stride;
        scales[r] = scale_origin(bases[r]);
        if (IS_GLU) { uscales[r] = scale_origin(ubases[r]); }
      }
      for (var c = kl; c < nc; c += kstride) {
        let xv = x_chunk(xb, c);
        if (Q8_X) {
          let xq = quantize_chunk(xv); // once per chunk, for the R rows
          for (var r = 0u; r < R; r++) {
            if (r < nr) {
              acc[r] += dot_chunk_q8(bases[r], scales[r], c, xq);
              if (IS_GLU) { up[r] += dot_chunk_q8(ubases[r], uscales[r], c, xq); }
            }
          }
          continue;
        }
        let s4 = xv[0] + xv[1] + xv[2] + xv[3] + xv[4] + xv[5] + xv[6] + xv[7];
        let xsum = s4.x + s4.y + s4.z + s4.w;
        for (var r = 0u; r < R; r++) {
          if (r < nr) {
            acc[r] += dot_chunk(bases[r], scales[r], c, xv, xsum);
            if (IS_GLU) { up[r] += dot_chunk(ubases[r], uscales[r], c, xv, xsum); }
          }
        }
      }
      for (var i = nc * 32u + kl; i < k; i += kstride) {
        let xi = x1(xb, i);
        for (var r = 0u; r < R; r++) {
          if (r < nr) {
            acc[r] += load1(bases[r], i) * xi;
            if (IS_GLU) { up[r] += load1(ubases[r], i) * xi; }
          }
        }
      }
    }
    for (var r = 0u; r < R; r++) {
      let s = subgroupAdd(acc[r]);
      var su = 0.0;
      if (IS_GLU) { su = subgroupAdd(up[r]); }
      if (is_live && lane == 0u) {
        let at = 2u * ((kpart * ROWS) + g * R + r);
        part[at] = s;
        part[at + 1u] = su;
      }
    }
  }
  workgroupBarrier();
  for (var r = lid; r < ROWS; r += WG_SIZE) {
    let row = row0 + r;
    if (row < p.n_rows) {
      var s = 0.0;
      var su = 0.0;
      for (var q = 0u; q < ksplit; q++) {
        s += part[2u * (q * ROWS + r)];
        su += part[2u * (q * ROWS + r) + 1u];
      }
      var y = s * f;
      if (IS_GLU) { y = act(y) * (su * f); }
      if (p.has_bias != 0u) { y += bias[p.out_offset + row]; }
      store(t, row, y);
    }
  }
}
