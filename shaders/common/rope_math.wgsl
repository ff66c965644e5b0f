// Rope math shared by rope.wgsl and rope_store.wgsl (ggml_rope_ext): the rotation of pair i at a position (linear
// scaling, YaRN mix, Cody–Waite range reduction) and the element indices of a pair. The kernel declares `p` (with
// n_rot, head_dim, is_neox, freq_scale, ext_factor, mscale, corr_lo, corr_hi) and `inv_freq` ((n_rot/2) f32).

const TWO_PI_HI: f32 = 6.28125;                   // 2π split for exact range reduction (Cody–Waite)
const TWO_PI_LO: f32 = 1.9353071795864769e-3;

/** cos and sin (times mscale) of the angle of pair i at position pos. */
fn rotation(pos: u32, i: u32) -> vec2<f32> {
  let extrap = f32(pos) * inv_freq[i];
  let interp = p.freq_scale * extrap;
  var theta = interp;
  if (p.ext_factor != 0.0) {
    let y = (f32(i) - p.corr_lo) / max(0.001, p.corr_hi - p.corr_lo);
    let mix = (1.0 - min(1.0, max(0.0, y))) * p.ext_factor;
    theta = interp * (1.0 - mix) + extrap * mix;
  }
  let m = round(theta / (TWO_PI_HI + TWO_PI_LO));
  let r = (theta - m * TWO_PI_HI) - m * TWO_PI_LO; // in [−π, π], where GPU sin/cos are accurate
  return vec2<f32>(cos(r), sin(r)) * p.mscale;
}

/** Element indices (a, b) of pair g of a [n, cols] tensor, and its row. */
fn pair_at(g: u32, cols: u32) -> vec3<u32> {
  let half = p.n_rot / 2u;
  let n_heads = cols / p.head_dim;
  let i = g % half;
  let h = (g / half) % n_heads;
  let row = g / (half * n_heads);
  let base = row * cols + h * p.head_dim;
  let a = select(base + 2u * i, base + i, p.is_neox != 0u);
  let b = select(a + 1u, a + half, p.is_neox != 0u);
  return vec3<u32>(a, b, row);
}
