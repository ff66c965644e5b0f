// attention: split-K flash attention of query rows over one layer's KV cache (decode and prefill alike).
// Workgroup (s, h, i) handles query row i (position start_pos + i), head h (KV head h / (n_heads/n_kv_heads),
// GQA) and the s-th run of split_len cached positions, inside the causal and sliding-window limits. Positions are
// walked in tiles of WG_SIZE with an online softmax (running max m, sum l, rescaled accumulator), in f32.
// With one split (`direct`) the normalised row goes straight to out; otherwise (m, l, acc[head_dim]) go to
// `partial` for attention_combine.wgsl. Scores: s = scale·q·k, then cap·tanh(s/cap) when softcap > 0.
// Dispatch: (n_splits, n_heads, n) workgroups; head_dim ≤ 8·WG_SIZE and ≤ 512 (Gemma 4 global layers). Reference: cpu/attention.ts.

struct Params {
  n_heads: u32,
  n_kv_heads: u32,
  head_dim: u32,
  q_stride: u32,     // columns of q and out (n_heads·head_dim)
  kv_stride: u32,    // cache row length (n_kv_heads·head_dim)
  kv_base: u32,      // first element of this slot in the layer's cache
  start_pos: u32,
  window: u32,       // sliding window (0 = none)
  n_splits: u32,
  split_len: u32,
  is_direct: u32,
  scale: f32,
  softcap: f32,
  kv_end: u32,       // 0: causal (row i sees positions ≤ start_pos + i); else every row sees positions < kv_end
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;                // (n, n_heads·head_dim) f32
@group(0) @binding(2) var<storage, read> k_cache: array<F>;            // (n_slots, context_length, kv_stride) F
@group(0) @binding(3) var<storage, read> v_cache: array<F>;            // (n_slots, context_length, kv_stride) F
@group(0) @binding(4) var<storage, read_write> out: array<f32>;        // (n, n_heads·head_dim) f32
@group(0) @binding(5) var<storage, read_write> partial: array<f32>;    // (n, n_heads, n_splits, head_dim + 2) f32

const NEG_BIG: f32 = -3.0e38;

var<workgroup> q_sh: array<f32, 512>;          // (head_dim ≤ 8·WG_SIZE = 512) the query row
var<workgroup> p_sh: array<f32, WG_SIZE>;      // (WG_SIZE) softmax weights of the current tile
var<workgroup> range_sh: vec2<u32>;            // [lo, hi) positions of this workgroup, made provably uniform

fn tanh_safe(v: f32) -> f32 {
  let e = exp(-2.0 * abs(v)); // never overflows, unlike (e^2v − 1)/(e^2v + 1)
  return sign(v) * (1.0 - e) / (1.0 + e);
}

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  let s = ids.wg.x;
  let h = ids.wg.y;
  let i = ids.wg.z;
  let lid = ids.lid;
  let hd = p.head_dim;
  let pos = p.start_pos + i;
  var first = 0u;
  if (p.window > 0u && pos + 1u > p.window) { first = pos + 1u - p.window; }
  let end = select(pos + 1u, p.kv_end, p.kv_end > 0u); // one past the last visible position
  if (lid == 0u) { range_sh = vec2<u32>(max(first, s * p.split_len), min(end, (s + 1u) * p.split_len)); }
  // The tile loop holds barriers: its bounds must be uniform in the analysis's eyes, not just in fact.
  let range = workgroupUniformLoad(&range_sh);
  let lo = range.x;
  let hi = range.y;
  let kv_off = p.kv_base + (h / (p.n_heads / p.n_kv_heads)) * hd;
  let q_off = i * p.q_stride + h * hd;
  for (var d = lid; d < hd; d += WG_SIZE) { q_sh[d] = q[q_off + d]; }
  workgroupBarrier();

  var m = NEG_BIG;
  var l = 0.0;
  var acc = array<f32, 8>(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0); // dims lid + j·WG_SIZE
  for (var t0 = lo; t0 < hi; t0 += WG_SIZE) {
    let t = t0 + lid;
    var sc = NEG_BIG;
    if (t < hi) {
      let kb = kv_off + t * p.kv_stride;
      var dot_qk = 0.0;
      for (var d = 0u; d < hd; d++) { dot_qk += q_sh[d] * f32(k_cache[kb + d]); }
      sc = dot_qk * p.scale;
      if (p.softcap > 0.0) { sc = p.softcap * tanh_safe(sc / p.softcap); }
    }
    let m_new = max(m, wg_max(sc, ids));
    let e = select(0.0, exp(sc - m_new), t < hi);
    p_sh[lid] = e;
    let tile_sum = wg_sum(e, ids); // its barriers also publish p_sh
    let alpha = exp(m - m_new);
    l = l * alpha + tile_sum;
    m = m_new;
    let cnt = min(WG_SIZE, hi - t0);
    for (var j = 0u; j < 8u; j++) {
      let d = lid + j * WG_SIZE;
      if (d < hd) {
        var a = acc[j] * alpha;
        for (var u = 0u; u < cnt; u++) { a += p_sh[u] * f32(v_cache[kv_off + (t0 + u) * p.kv_stride + d]); }
        acc[j] = a;
      }
    }
  }

  if (p.is_direct != 0u) {
    let inv = 1.0 / l;
    for (var j = 0u; j < 8u; j++) {
      let d = lid + j * WG_SIZE;
      if (d < hd) { out[q_off + d] = acc[j] * inv; }
    }
  } else {
    let pb = ((i * p.n_heads + h) * p.n_splits + s) * (hd + 2u);
    if (lid == 0u) { partial[pb] = m; partial[pb + 1u] = l; }
    for (var j = 0u; j < 8u; j++) {
      let d = lid + j * WG_SIZE;
      if (d < hd) { partial[pb + 2u + d] = acc[j]; }
    }
  }
}
