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
// Composed after reduce_subgroup.wgsl (WG_SIZE), bits.wgsl, one quant snippet (load4/load1) and
// common/gemv_io.wgsl (overrides but ROWS, Params, bindings, row_base, row_dot, act, store).
// Dispatch: (gx, gy, n) workgroups, rows (wg.y·gx + wg.x)·ROWS …, token t = wg.z. f32 accumulation.
// Reference: x·Wᵀ with W dequantized by src/quant (CpuOps.matmul), NMSE; fusions: webgpu-hardware-fused test.

override ROWS: u32 = 16u;
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
      acc = row_dot(row_base(row), xb, lane, lanes);
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
