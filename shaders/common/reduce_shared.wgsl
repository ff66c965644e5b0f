// Workgroup reductions through workgroup memory (a log2 tree): the path for devices without `subgroups`.
// Defines the entry-point builtins struct `Ids` and `wg_sum`, `wg_max`, `wg_min`; every invocation gets the result.
// Requires WG_SIZE to be a power of two ≤ 256 (never more: SwiftShader caps workgroups at 256 invocations).
// Call only from uniform control flow (they contain barriers).

override WG_SIZE: u32 = 64u;

/** Builtins every kernel's `main` receives. */
struct Ids {
  @builtin(local_invocation_index) lid: u32,
  @builtin(workgroup_id) wg: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
}

var<workgroup> red_buf: array<f32, WG_SIZE>; // (WG_SIZE) partial values

fn wg_reduce(v: f32, ids: Ids, op: u32) -> f32 {
  workgroupBarrier(); // red_buf may still be read by a previous reduction
  red_buf[ids.lid] = v;
  workgroupBarrier();
  for (var s = WG_SIZE / 2u; s > 0u; s = s / 2u) {
    if (ids.lid < s) {
      let a = red_buf[ids.lid];
      let b = red_buf[ids.lid + s];
      red_buf[ids.lid] = select(select(min(a, b), max(a, b), op == 1u), a + b, op == 0u);
    }
    workgroupBarrier();
  }
  return red_buf[0];
}

fn wg_sum(v: f32, ids: Ids) -> f32 { return wg_reduce(v, ids, 0u); }
fn wg_max(v: f32, ids: Ids) -> f32 { return wg_reduce(v, ids, 1u); }
fn wg_min(v: f32, ids: Ids) -> f32 { return wg_reduce(v, ids, 2u); }
