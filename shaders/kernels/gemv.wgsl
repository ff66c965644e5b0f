// gemv: the hardware decode GEMV without subgroups (Firefox, Safari, the f32 path): one workgroup per weight row,
// invocations striding over K, one workgroup reduction (reduce_shared.wgsl's tree, or reduce_subgroup.wgsl) per row.
// Same fusions, Params and bindings as gemv_sg.wgsl (see there), so the host records both alike:
//   y[r] = Σ_k W[r, k]·x'[k] (x' = rmsNorm(x)·norm_w with HAS_NORM), + bias (has_bias), IS_GLU: act(gate)·up,
//   out = y or out += y (ACCUMULATE); rows ≥ split1 / split2 go to out1 / out2 (Q|K|V in one dispatch).
// Composed after a reduce_*.wgsl (Ids, WG_SIZE, wg_sum), bits.wgsl, one quant snippet (load4/load1) and
// common/gemv_io.wgsl (overrides, Params, bindings, row_base, row_dot, act, store).
// Dispatch: (gx, gy, n) workgroups, row = wg.y·gx + wg.x, token t = wg.z. f32 accumulation.
// Reference: x·Wᵀ with W dequantized by src/quant (CpuOps.matmul), NMSE.

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
    acc = row_dot(row_base(row), xb, ids.lid, WG_SIZE);
    if (IS_GLU) { up = row_dot(p.w_base1 + row * p.row_stride, xb, ids.lid, WG_SIZE); }
  }
  var y = wg_sum(acc, ids) * f;
  if (IS_GLU) { y = act(y) * (wg_sum(up, ids) * f); }
  if (is_live && ids.lid == 0u) {
    if (p.has_bias != 0u) { y += bias[p.out_offset + row]; }
    store(t, row, y);
  }
}
