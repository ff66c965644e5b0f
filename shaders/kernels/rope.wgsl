// rope: rotates x ([n, n_heads·head_dim]) in place at positions start_pos + row (ggml_rope_ext): NORM pairs
// (2i, 2i+1) or NEOX pairs (i, i + n_rot/2), the first n_rot dims of each head; linear scaling and YaRN.
// inv_freq[i] = theta^(−2i/n_rot) / freq_factor[i] is computed once on the CPU in f64 (more exact than GPU pow).
// Dispatch: 1-D over n·n_heads·n_rot/2 pairs, (gx, gy) workgroups. Reference: src/backend/cpu/rope.ts.

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

const TWO_PI_HI: f32 = 6.28125;                   // 2π split for exact range reduction (Cody–Waite)
const TWO_PI_LO: f32 = 1.9353071795864769e-3;

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  let g = (ids.wg.y * ids.nwg.x + ids.wg.x) * WG_SIZE + ids.lid;
  if (g >= p.total) { return; }
  let half = p.n_rot / 2u;
  let n_heads = p.cols / p.head_dim;
  let i = g % half;
  let h = (g / half) % n_heads;
  let row = g / (half * n_heads);
  let extrap = f32(p.start_pos + row) * inv_freq[i];
  let interp = p.freq_scale * extrap;
  var theta = interp;
  if (p.ext_factor != 0.0) {
    let y = (f32(i) - p.corr_lo) / max(0.001, p.corr_hi - p.corr_lo);
    let mix = (1.0 - min(1.0, max(0.0, y))) * p.ext_factor;
    theta = interp * (1.0 - mix) + extrap * mix;
  }
  let k = round(theta / (TWO_PI_HI + TWO_PI_LO));
  let r = (theta - k * TWO_PI_HI) - k * TWO_PI_LO; // in [−π, π], where GPU sin/cos are accurate
  let c = cos(r) * p.mscale;
  let s = sin(r) * p.mscale;
  let base = row * p.cols + h * p.head_dim;
  let a = select(base + 2u * i, base + i, p.is_neox != 0u);
  let b = select(a + 1u, a + half, p.is_neox != 0u);
  let x0 = x[a];
  let x1 = x[b];
  x[a] = x0 * c - x1 * s;
  x[b] = x0 * s + x1 * c;
}
