// rope_store: one dispatch for rope(q) + rope(k) + storeKv — rotates q ([n, q_cols]) and k ([n, kv_cols]) in place
// at positions start_pos + row (ggml_rope_ext: NORM pairs (2i, 2i+1) or NEOX pairs (i, i + n_rot/2) of the first
// n_rot dims of each head, linear scaling, YaRN; shaders/common/rope_math.wgsl) and writes the rotated k and v into one
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
