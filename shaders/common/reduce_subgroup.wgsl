// Workgroup reductions through subgroup operations: one subgroupAdd/Max/Min, then one partial per subgroup in
// workgroup memory. Same API as reduce_shared.wgsl (`Ids`, `wg_sum`, `wg_max`, `wg_min`). Works for any subgroup
// size (4 on SwiftShader, 8 on lavapipe, 32/64 on GPUs); subgroups are taken to be runs of consecutive
// local_invocation_index, as on every implementation we know. Call only from uniform control flow.

override WG_SIZE: u32 = 64u;

/** Builtins every kernel's `main` receives. */
struct Ids {
  @builtin(local_invocation_index) lid: u32,
  @builtin(workgroup_id) wg: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(subgroup_invocation_id) sg_lane: u32,
  @builtin(subgroup_size) sg_size: u32,
}

var<workgroup> red_buf: array<f32, WG_SIZE>; // (WG_SIZE / subgroup size) partial values used

fn wg_combine(s: f32, ids: Ids, op: u32) -> f32 {
  workgroupBarrier(); // red_buf may still be read by a previous reduction
  if (ids.sg_lane == 0u) {
    red_buf[ids.lid / ids.sg_size] = s;
  }
  workgroupBarrier();
  let n_sg = (WG_SIZE + ids.sg_size - 1u) / ids.sg_size;
  var t = red_buf[0];
  for (var i = 1u; i < n_sg; i++) {
    let b = red_buf[i];
    t = select(select(min(t, b), max(t, b), op == 1u), t + b, op == 0u);
  }
  return t;
}

fn wg_sum(v: f32, ids: Ids) -> f32 { return wg_combine(subgroupAdd(v), ids, 0u); }
fn wg_max(v: f32, ids: Ids) -> f32 { return wg_combine(subgroupMax(v), ids, 1u); }
fn wg_min(v: f32, ids: Ids) -> f32 { return wg_combine(subgroupMin(v), ids, 2u); }
