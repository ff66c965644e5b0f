// Matrix snippet of gemm_sm.wgsl in plain WGSL: the subgroup-matrix operations it uses, with the same shapes, element
// types and memory layouts, spread over a LANES-wide group of invocations (lid / LANES) as a subgroup would hold
// them: a left or right "matrix" is its place in the workgroup tile (the tiles do not change between a load and the
// products that use it), and each lane owns result elements e = lane, lane + LANES, … (row e / SM_N, column
// e % SM_N), accumulated in f32 from the tiles' CT values. Runs on any adapter (small loops: cheap to compile), so the
// kernel's tiling, staging, f16 rounding, overflow guard and edges are tested where the
// `chromium-experimental-subgroup-matrix` feature is missing (lavapipe, SwiftShader).

const SM_E: u32 = (SM_M * SM_N + LANES - 1u) / LANES; // result elements per lane

struct SmLeft { off: u32 }   // tile_w[off]: SM_M rows × SM_K, row-major, pitch PK
struct SmRight { off: u32 }  // tile_x[off]: SM_N tokens × SM_K (read as SM_K × SM_N), pitch PK
struct SmAcc { v: array<f32, SM_E> } // this lane's elements

struct SmIds {
  @builtin(local_invocation_index) lid: u32,
  @builtin(workgroup_id) wg: vec3<u32>,
}

var<private> sm_lane: u32; // this invocation's lane in its group, set by sm_group

fn sm_group(ids: SmIds) -> u32 {
  sm_lane = ids.lid % LANES;
  return ids.lid / LANES;
}

fn sm_load_w(off: u32) -> SmLeft { return SmLeft(off); }

fn sm_load_x(off: u32) -> SmRight { return SmRight(off); }

/** c + a·b for this lane's elements (sm_lane). */
fn sm_mma(a: SmLeft, b: SmRight, c: SmAcc) -> SmAcc {
  var m = c;
  for (var i = 0u; i < SM_E; i++) {
    let e = sm_lane + i * LANES;
    if (e < SM_M * SM_N) {
      let wr = a.off + (e / SM_N) * PK;
      let xr = b.off + (e % SM_N) * PK;
      var s = m.v[i];
      for (var k = 0u; k < SM_K; k++) { s += f32(tile_w[wr + k]) * f32(tile_x[xr + k]); }
      m.v[i] = s;
    }
  }
  return m;
}

/** Each lane stores its elements (column-major: token-major, pitch PO). */
fn sm_store(off: u32, m: SmAcc, ids: SmIds) {
  for (var i = 0u; i < SM_E; i++) {
    let e = ids.lid % LANES + i * LANES;
    if (e < SM_M * SM_N) { tile_o[off + (e % SM_N) * PO + e / SM_N] = m.v[i]; }
  }
}
