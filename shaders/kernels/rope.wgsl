// rope: rotates x ([n, n_heads·head_dim]) in place at positions start_pos + row (ggml_rope_ext): NORM pairs
// (2i, 2i+1) or NEOX pairs (i, i + n_rot/2), the first n_rot dims of each head; linear scaling and YaRN.
// inv_freq[i] = theta^(−2i/n_rot) / freq_factor[i] is computed once on the CPU in f64 (more exact than GPU pow).
// Dispatch: 1-D over n·n_heads·n_rot/2 pairs, (gx, gy) workgroups. Math: shaders/common/rope_math.wgsl.
// Reference: src/backend/cpu/rope.ts.

struct Params {
  cols: u32,
  head_dim: u32,
  n_rot: u32,
  start_pos: u32,
  is_neox: u32,
  total: u32,        // pairs to rotate: n · n_heads · n_rot/2
  freq_scale: f32,
  ext_factor: f32,   // YaRN mix (0 = off)
  mscale: f32,       // YaRN magnitude scale (1 without YaRN)
  corr_lo: f32,      // YaRN correction dims
  corr_hi: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;    // (n, cols) f32
@group(0) @binding(2) var<storage, read> inv_freq: array<f32>;   // (n_rot/2) f32

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  let g = (ids.wg.y * ids.nwg.x + ids.wg.x) * WG_SIZE + ids.lid;
  if (g >= p.total) { return; }
  let ab = pair_at(g, p.cols);
  let cs = rotation(p.start_pos + ab.z, g % (p.n_rot / 2u));
  let x0 = x[ab.x];
  let x1 = x[ab.y];
  x[ab.x] = x0 * cs.x - x1 * cs.y;
  x[ab.y] = x0 * cs.y + x1 * cs.x;
}
