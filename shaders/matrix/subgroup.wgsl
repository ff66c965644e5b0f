// Matrix snippet of gemm_sm.wgsl on the `chromium-experimental-subgroup-matrix` builtins (the host's prelude adds
// `enable chromium_experimental_subgroup_matrix;` and turns off its uniformity diagnostic: the kernel branches on the
// subgroup index, uniform within a subgroup). Subgroup s = the invocations lid / subgroup_size = s (runs of
// consecutive local_invocation_index, as on every implementation we know). Load and store take the memory layout as
// a template argument (`subgroupMatrixLoad<T, row_major>(p, offset, stride)`, `subgroupMatrixStore<col_major>(p,
// offset, value, stride)`): the form of the Dawn in npm `webgpu` 0.6.2 (its validator asserts 2 and 1 explicit
// template parameters); earlier Dawn took a `col_major: bool` argument instead (as llama.cpp's ggml-webgpu shaders do).

alias SmLeft = subgroup_matrix_left<CT, SM_K, SM_M>;    // SM_M rows × SM_K columns of W
alias SmRight = subgroup_matrix_right<CT, SM_N, SM_K>;  // SM_K rows × SM_N columns of xᵀ
alias SmAcc = subgroup_matrix_result<f32, SM_N, SM_M>;  // SM_M rows × SM_N columns of the result

struct SmIds {
  @builtin(local_invocation_index) lid: u32,
  @builtin(workgroup_id) wg: vec3<u32>,
  @builtin(subgroup_size) sg_size: u32,
}

fn sm_group(ids: SmIds) -> u32 { return ids.lid / ids.sg_size; }

/** The SM_M × SM_K left matrix at tile_w[off], row-major with pitch PK. */
fn sm_load_w(off: u32) -> SmLeft { return subgroupMatrixLoad<SmLeft, row_major>(&tile_w, off, PK); }

/** The SM_K × SM_N right matrix at tile_x[off]: token-major storage read column-major with pitch PK. */
fn sm_load_x(off: u32) -> SmRight { return subgroupMatrixLoad<SmRight, col_major>(&tile_x, off, PK); }

fn sm_mma(a: SmLeft, b: SmRight, c: SmAcc) -> SmAcc { return subgroupMatrixMultiplyAccumulate(a, b, c); }

/** Stores a result matrix at tile_o[off] column-major (token-major) with pitch PO. */
fn sm_store(off: u32, m: SmAcc, ids: SmIds) { subgroupMatrixStore<col_major>(&tile_o, off, m, PO); }
