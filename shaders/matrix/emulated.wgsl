// Matrix snippet of gemm_sm.wgsl in plain WGSL: the subgroup-matrix operations it uses, with the same shapes, element
// types and memory layouts, held whole by every invocation of a LANES-wide group (lid / LANES) instead of spread over
// a subgroup. Runs on any adapter, so the kernel's tiling, staging, f16 rounding, overflow guard and edges are tested
// where the `chromium-experimental-subgroup-matrix` feature is missing (lavapipe, SwiftShader).

struct SmLeft { v: array<f32, SM_M * SM_K> }   // (SM_M rows, SM_K) row-major
struct SmRight { v: array<f32, SM_K * SM_N> }  // (SM_K rows, SM_N) row-major
struct SmAcc { v: array<f32, SM_M * SM_N> }    // (SM_M rows, SM_N) row-major

struct SmIds {
  @builtin(local_invocation_index) lid: u32,
  @builtin(workgroup_id) wg: vec3<u32>,
}

fn sm_group(ids: SmIds) -> u32 { return ids.lid / LANES; }

fn sm_load_w(off: u32) -> SmLeft {
  var m: SmLeft;
  for (var r = 0u; r < SM_M; r++) {
    for (var c = 0u; c < SM_K; c++) { m.v[r * SM_K + c] = f32(tile_w[off + r * PK + c]); }
  }
  return m;
}

fn sm_load_x(off: u32) -> SmRight {
  var m: SmRight;
  for (var k = 0u; k < SM_K; k++) {
    for (var t = 0u; t < SM_N; t++) { m.v[k * SM_N + t] = f32(tile_x[off + t * PK + k]); }
  }
  return m;
}

fn sm_mma(a: SmLeft, b: SmRight, c: SmAcc) -> SmAcc {
  var m = c;
  for (var r = 0u; r < SM_M; r++) {
    for (var t = 0u; t < SM_N; t++) {
      var s = m.v[r * SM_N + t];
      for (var k = 0u; k < SM_K; k++) { s += a.v[r * SM_K + k] * b.v[k * SM_N + t]; }
      m.v[r * SM_N + t] = s;
    }
  }
  return m;
}

/** Each invocation of the group stores its share of the elements (column-major, pitch PO). */
fn sm_store(off: u32, m: SmAcc, ids: SmIds) {
  for (var e = ids.lid % LANES; e < SM_M * SM_N; e += LANES) {
    tile_o[off + (e % SM_N) * PO + e / SM_N] = m.v[e];
  }
}
