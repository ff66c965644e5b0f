// rope_store: one dispatch for rope(q) + rope(k) + storeKv — rotates q ([n, q_cols]) and k ([n, kv_cols]) in place
// at positions start_pos + row (ggml_rope_ext: NORM pairs (2i, 2i+1) or NEOX pairs (i, i + n_rot/2) of the first
// n_rot dims of each head, linear scaling, YaRN; the same math as rope.wgsl) and writes the rotated k and v into one
// layer's cache (F: f16 on the f16 path) at element offset dst = (slot·context_length + start_pos)·kv_cols.
// Invocation g: g < q_pairs rotates a q pair; then k pairs (writing both rotated values to k and k_cache); then
// one v element each. Dispatch: 1-D over q_pairs + k_pairs + n·kv_cols, (gx, gy) workgroups.
// Reference: CpuOps rope + storeKv (src/backend/cpu/rope.ts).

struct Params {
  q_cols: u32,
  kv_cols: u32,
  head_dim: u32,
  n_rot: u32,
  start_pos: u32,
  is_neox: u32,
  n: u32,            // rows (tokens)
  dst: u32,          // first cache element
  freq_scale: f32,
  ext_factor: f32,   // YaRN mix (0 = off)
  mscale: f32,       // YaRN magnitude scale (1 without YaRN)
  corr_lo: f32,      // YaRN correction dims
  corr_hi: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> q: array<f32>;        // (n, q_cols) f32
@group(0) @binding(2) var<storage, read_write> k: array<f32>;        // (n, kv_cols) f32
@group(0) @binding(3) var<storage, read> v: array<f32>;              // (n, kv_cols) f32
@group(0) @binding(4) var<storage, read> inv_freq: array<f32>;       // (n_rot/2) f32
@group(0) @binding(5) var<storage, read_write> k_cache: array<F>;    // (n_slots, context_length, kv_cols) F
@group(0) @binding(6) var<storage, read_write> v_cache: array<F>;    // (n_slots, context_length, kv_cols) F

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

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  let g = (ids.wg.y * ids.nwg.x + ids.wg.x) * WG_SIZE + ids.lid;
  let half = p.n_rot / 2u;
  let q_pairs = p.n * (p.q_cols / p.head_dim) * half;
  let k_pairs = p.n * (p.kv_cols / p.head_dim) * half;
  if (g < q_pairs) {
    let ab = pair_at(g, p.q_cols);
    let cs = rotation(p.start_pos + ab.z, g % half);
    let x0 = q[ab.x];
    let x1 = q[ab.y];
    q[ab.x] = x0 * cs.x - x1 * cs.y;
    q[ab.y] = x0 * cs.y + x1 * cs.x;
  } else if (g < q_pairs + k_pairs) {
    let gk = g - q_pairs;
    let ab = pair_at(gk, p.kv_cols);
    let cs = rotation(p.start_pos + ab.z, gk % half);
    let x0 = k[ab.x];
    let x1 = k[ab.y];
    let y0 = x0 * cs.x - x1 * cs.y;
    let y1 = x0 * cs.y + x1 * cs.x;
    k[ab.x] = y0;
    k[ab.y] = y1;
    k_cache[p.dst + ab.x] = F(y0);
    k_cache[p.dst + ab.y] = F(y1);
  } else {
    let e = g - q_pairs - k_pairs; // one k element outside the rotated dims, and one v element
    if (e >= p.n * p.kv_cols) { return; }
    let c = e % p.head_dim;
    if (c >= p.n_rot) { k_cache[p.dst + e] = F(k[e]); } // partial rotary: the tail passes through
    v_cache[p.dst + e] = F(v[e]);
  }
}
