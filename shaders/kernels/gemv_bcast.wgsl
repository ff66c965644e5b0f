// gemv_bcast: decode matmul for software adapters (llvmpipe, SwiftShader), with optional fusions:
//   out[t, out_offset + r] = (ACCUMULATE ? out[…] : 0) + f_t · Σ_k W[r, k]·(x[t, k]·nw[k]) (+ bias[r])
// where f_t = 1/sqrt(mean(x[t]²) + eps) and nw the norm weight when HAS_NORM (an RMSNorm folded in), else 1;
// with IS_GLU the row also runs against `up` and the result is act(gate row)·(up row) (SwiGLU/GEGLU, no bias).
// Why: a CPU "GPU" runs a subgroup as SIMD lanes and turns every storage load into per-lane scalar loads, so x
// (the same for every row) must not be loaded per lane. Each lane owns two weight rows; per 32-element block the
// subgroup loads x once (lane l takes x[4l … 4l+3]) and hands it to every lane with subgroupBroadcast. Subgroups
// smaller than 8 (SwiftShader: 4) load x per lane instead. No barriers; the norm's sum of squares rides along.
// Needs K a multiple of 32 and `dot32` (shaders/quant/*_dot32.wgsl or the generic dot32.wgsl over load4); weight
// buffers are bound twice (u32 and vec4<u32> views) so block quants load as whole vec4s.
// Dispatch: (gx, gy, n) workgroups of 2·WG_SIZE rows (rows g·2·WG_SIZE + lid and + WG_SIZE, g = wg.y·gx + wg.x),
// token t = wg.z.
// Reference: CpuOps rmsNorm + matmul (+ add / glu), judged by NMSE.

override HAS_NORM: bool = false;
override ACCUMULATE: bool = false;
override IS_GLU: bool = false;
override IS_GELU: bool = false;
override FORCE_DIRECT: bool = false; // tests: take the per-lane x path of subgroups smaller than 8

struct Params {
  k: u32,            // row length (elements, a multiple of 32)
  n_rows: u32,       // rows in this weight part
  row_stride: u32,   // words per repacked row
  x_stride: u32,     // columns of x
  out_stride: u32,   // columns of out
  out_offset: u32,   // first output column of this part
  has_bias: u32,
  eps: f32,          // RMSNorm epsilon (HAS_NORM)
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> weights: array<u32>;       // (n_rows, row_stride) u32, repacked blocks
@group(0) @binding(2) var<storage, read> x: array<vec4<f32>>;       // (n, x_stride / 4) f32
@group(0) @binding(3) var<storage, read_write> out: array<f32>;     // (n, out_stride) f32
@group(0) @binding(4) var<storage, read> bias: array<f32>;          // (out_stride) f32, read when has_bias
@group(0) @binding(5) var<storage, read> norm_w: array<vec4<f32>>;  // (k / 4) f32, read when HAS_NORM
@group(0) @binding(6) var<storage, read> up_w: array<u32>;          // (n_rows, row_stride) u32, read when IS_GLU
@group(0) @binding(7) var<storage, read> weights4: array<vec4<u32>>; // `weights` again, as vec4 (fast dot32 forms)
@group(0) @binding(8) var<storage, read> up_w4: array<vec4<u32>>;    // `up_w` again, as vec4

const GELU_COEF_A: f32 = 0.044715;
const SQRT_2_OVER_PI: f32 = 0.7978845608028654;

fn glu_act(g: f32) -> f32 {
  if (IS_GELU) {
    let u = SQRT_2_OVER_PI * g * (1.0 + GELU_COEF_A * g * g);
    let e = exp(-2.0 * abs(u)); // overflow-free tanh
    return 0.5 * g * (1.0 + sign(u) * (1.0 - e) / (1.0 + e));
  }
  return g / (1.0 + exp(-g));
}

/** One 32-element block of x[t] (times the norm weight): eight vec4, their sum, and this lane's share of Σ x². */
struct XBlock {
  x0: vec4<f32>, x1: vec4<f32>, x2: vec4<f32>, x3: vec4<f32>,
  x4: vec4<f32>, x5: vec4<f32>, x6: vec4<f32>, x7: vec4<f32>,
  sx: f32,
  ss: f32,
}

/** x[t] (times the norm weight) at vec4 index `i` of the row. */
fn x_at(xb: u32, i: u32) -> vec4<f32> {
  if (HAS_NORM) { return x[xb + i] * norm_w[i]; }
  return x[xb + i];
}

fn finish(v: XBlock) -> XBlock {
  var r = v;
  let s4 = (v.x0 + v.x1) + (v.x2 + v.x3) + (v.x4 + v.x5) + (v.x6 + v.x7);
  r.sx = s4.x + s4.y + s4.z + s4.w;
  return r;
}

/** Block `b` through the subgroup: lane l loads x[8b + (l & 7)] once, subgroupBroadcast hands it to every lane. */
fn block_bcast(xb: u32, b: u32, lane: u32) -> XBlock {
  let i = b * 8u + (lane & 7u);
  let raw = x[xb + i];
  var v: XBlock;
  v.ss = select(0.0, dot(raw, raw), HAS_NORM && lane < 8u);
  var xv = raw;
  if (HAS_NORM) { xv = raw * norm_w[i]; }
  v.x0 = subgroupBroadcast(xv, 0u);
  v.x1 = subgroupBroadcast(xv, 1u);
  v.x2 = subgroupBroadcast(xv, 2u);
  v.x3 = subgroupBroadcast(xv, 3u);
  v.x4 = subgroupBroadcast(xv, 4u);
  v.x5 = subgroupBroadcast(xv, 5u);
  v.x6 = subgroupBroadcast(xv, 6u);
  v.x7 = subgroupBroadcast(xv, 7u);
  return finish(v);
}

/** Block `b` loaded by every lane itself (subgroups smaller than 8); lane 0 carries the Σ x² share. */
fn block_direct(xb: u32, b: u32, lane: u32) -> XBlock {
  let o = b * 8u;
  var v: XBlock;
  v.x0 = x_at(xb, o);
  v.x1 = x_at(xb, o + 1u);
  v.x2 = x_at(xb, o + 2u);
  v.x3 = x_at(xb, o + 3u);
  v.x4 = x_at(xb, o + 4u);
  v.x5 = x_at(xb, o + 5u);
  v.x6 = x_at(xb, o + 6u);
  v.x7 = x_at(xb, o + 7u);
  v.ss = 0.0;
  if (HAS_NORM && lane == 0u) {
    for (var j = 0u; j < 8u; j++) { let r = x[xb + o + j]; v.ss += dot(r, r); }
  }
  return finish(v);
}

/** Writes row `row` of token t (bias, GLU, accumulate applied); rows past n_rows are skipped. */
fn store(t: u32, row: u32, acc: f32, acc_up: f32) {
  if (row >= p.n_rows) { return; }
  let o = t * p.out_stride + p.out_offset + row;
  var v = acc;
  if (IS_GLU) {
    v = glu_act(acc) * acc_up;
  } else if (p.has_bias != 0u) {
    v += bias[p.out_offset + row];
  }
  if (ACCUMULATE) { v += out[o]; }
  out[o] = v;
}

@compute @workgroup_size(WG_SIZE)
fn main(
  @builtin(local_invocation_index) lid: u32,
  @builtin(workgroup_id) wg: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(subgroup_invocation_id) lane: u32,
  @builtin(subgroup_size) sg_size: u32,
) {
  // Two rows per lane (r0, r0 + WG_SIZE): every x block loaded and broadcast serves both. Rows are clamped so every
  // lane stays active: the broadcasts need their source lanes.
  let r0 = (wg.y * nwg.x + wg.x) * (2u * WG_SIZE) + lid;
  let r1 = r0 + WG_SIZE;
  let base0 = min(r0, p.n_rows - 1u) * p.row_stride;
  let base1 = min(r1, p.n_rows - 1u) * p.row_stride;
  let xb = wg.z * (p.x_stride / 4u);
  let nb = p.k / 32u;
  let is_bcast = sg_size >= 8u && !FORCE_DIRECT;
  var acc0 = 0.0;
  var acc1 = 0.0;
  var up0 = 0.0;
  var up1 = 0.0;
  var ss = 0.0; // this lane's share of Σ x² (HAS_NORM)
  for (var b = 0u; b < nb; b++) {
    var v: XBlock;
    if (is_bcast) { v = block_bcast(xb, b, lane); } else { v = block_direct(xb, b, lane); }
    ss += v.ss;
    acc0 += dot32(base0, b, v.x0, v.x1, v.x2, v.x3, v.x4, v.x5, v.x6, v.x7, v.sx);
    acc1 += dot32(base1, b, v.x0, v.x1, v.x2, v.x3, v.x4, v.x5, v.x6, v.x7, v.sx);
    if (IS_GLU) {
      up0 += dot32_up(base0, b, v.x0, v.x1, v.x2, v.x3, v.x4, v.x5, v.x6, v.x7, v.sx);
      up1 += dot32_up(base1, b, v.x0, v.x1, v.x2, v.x3, v.x4, v.x5, v.x6, v.x7, v.sx);
    }
  }
  var f = 1.0;
  if (HAS_NORM) { f = 1.0 / sqrt(subgroupAdd(ss) / f32(p.k) + p.eps); }
  store(wg.z, r0, acc0 * f, up0 * f);
  store(wg.z, r1, acc1 * f, up1 * f);
}
