// attention_prefill: tiled causal flash attention for prefill batches (n ≥ 2 query tokens) over one layer's KV cache.
// A workgroup owns ROWS query rows of one KV head kh, a row being a (token t, query head of kh's GQA group) pair in
// token-major order (row j → token j / group, head kh·group + j % group), so the heads that share a KV head share
// every K/V tile. It walks the positions its rows can see in tiles of KEYS, staged in workgroup memory as F (f16 on
// the f16 path), with an online softmax per row (running max m, sum l, rescaled accumulator) in f32. Row j is served
// by TPR = WG_SIZE / ROWS invocations: invocation (r, c) scores keys c, c+TPR, … of the tile and accumulates the
// output vec4s c, c+TPR, … (tiles hold vec4 rows, zero past HD); each one rescans its row's scores for the tile
// maximum, so there are no reductions and three barriers per tile.
// Mask: key k is visible to token t iff first(pos) ≤ k ≤ pos = start_pos + t, first = pos + 1 − window when a
// sliding window is set. Scores s = scale·q·k, then cap·tanh(s/cap) when softcap > 0, then the ALiBi bias when set.
// Reference: cpu/attention.ts.
// Split-K (short batches over long contexts on GPUs): workgroup z sees only positions [z, z+1)·split_len and writes
// (m, l, acc) per row to `partial` for attention_combine.wgsl, as the decode kernel does; one split writes out.
// Dispatch: (ceil(n·group / ROWS), n_kv_heads, n_splits) workgroups; HD ≤ 4·MAX_D4·TPR. Sizes: attention-prefill.ts.

override HD: u32 = 64u;    // head dim (any value, odd ones included)
override ROWS: u32 = 16u;  // query rows per workgroup; divides WG_SIZE
override KEYS: u32 = 16u;  // cached positions per K/V tile
override TPR: u32 = WG_SIZE / ROWS;          // invocations per query row
override H4: u32 = (HD + 3u) / 4u;           // vec4s per head row (dims past HD are zero in the tiles)
override D4: u32 = (H4 + TPR - 1u) / TPR;    // output vec4s per invocation (≤ MAX_D4)
override P4: u32 = H4 + 1u;                  // row pitch of q_sh and k_sh (rows fall on distinct banks)
override SP: u32 = KEYS + 1u;                // row pitch of s_sh

const MAX_D4: u32 = 8u;
const NEG_BIG: f32 = -3.0e38;
const MASKED: f32 = -1.0e38; // scores at or below this are masked

struct Params {
  n: u32,            // query tokens of the step
  group: u32,        // query heads per KV head (n_heads / n_kv_heads)
  q_stride: u32,     // columns of q and out (n_heads·head_dim)
  kv_stride: u32,    // cache row length (n_kv_heads·head_dim)
  kv_base: u32,      // first element of this slot in the layer's cache
  start_pos: u32,
  window: u32,       // sliding window (0 = none)
  scale: f32,
  softcap: f32,
  n_splits: u32,     // runs of split_len positions, one per workgroup z (split-K for short batches on GPUs)
  split_len: u32,
  is_direct: u32,    // 1: one split, normalised rows go to out; 0: (m, l, acc) go to partial
  kv_end: u32,       // 0: causal; else every token sees positions < kv_end (non-causal; the window still applies)
  symmetric: u32,    // 1 (non-causal only): a token at pos sees pos ± window/2 (llama.cpp's symmetric SWA)
  alibi_m0: f32,     // ALiBi (jina-bert-v2; alibi_n > 0): head h adds slope_h·−|pos − key| to its scores, with
  alibi_m1: f32,     // slope_h = m0^(h+1) for h < alibi_n, else m1^(2(h − alibi_n)+1) (ggml's slopes, backend/alibi.ts)
  alibi_n: u32,      // 2^⌊log2 n_heads⌋, or 0: no ALiBi
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;                // (n, n_heads·head_dim) f32
@group(0) @binding(2) var<storage, read> k_cache: array<F>;            // (n_slots, context_length, kv_stride) F
@group(0) @binding(3) var<storage, read> v_cache: array<F>;            // (n_slots, context_length, kv_stride) F
@group(0) @binding(4) var<storage, read_write> out: array<f32>;        // (n, n_heads·head_dim) f32
@group(0) @binding(5) var<storage, read_write> partial: array<f32>;    // (n, n_heads, n_splits, head_dim + 2) f32

var<workgroup> q_sh: array<vec4<f32>, ROWS * P4>;   // (ROWS, P4) query rows of the tile
var<workgroup> k_sh: array<vec4<F>, KEYS * P4>;     // (KEYS, P4) keys of the current tile
var<workgroup> v_sh: array<vec4<F>, KEYS * H4>;     // (KEYS, H4) values of the current tile
var<workgroup> s_sh: array<f32, ROWS * SP>;         // (ROWS, SP) scores of the current tile
var<workgroup> range_sh: vec2<u32>;            // [lo, hi) positions of this workgroup, made provably uniform

fn tanh_safe(v: f32) -> f32 {
  let e = exp(-2.0 * abs(v)); // never overflows, unlike (e^2v − 1)/(e^2v + 1)
  return sign(v) * (1.0 - e) / (1.0 + e);
}

/** First visible position for a query at `pos`. */
fn first_visible(pos: u32) -> u32 {
  if (p.symmetric != 0u) { return select(0u, pos - p.window / 2u, pos > p.window / 2u); }
  if (p.window > 0u && pos + 1u > p.window) { return pos + 1u - p.window; }
  return 0u;
}

/** One past the last visible position for a query at `pos` (non-causal: the sequence, or ±window/2 of pos). */
fn end_visible(pos: u32) -> u32 {
  if (p.symmetric != 0u) { return min(p.kv_end, pos + p.window / 2u + 1u); }
  return select(pos + 1u, p.kv_end, p.kv_end > 0u);
}

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  let lid = ids.lid;
  let kh = ids.wg.y;
  let j0 = ids.wg.x * ROWS;
  let n_rows = p.n * p.group;
  let r = lid / TPR;
  let c = lid % TPR;
  let j = j0 + r;
  let row_ok = j < n_rows;
  let t = j / p.group;
  let h = kh * p.group + j % p.group;
  let pos = p.start_pos + t;
  let first = first_visible(pos);
  let sp = ids.wg.z;
  var slope = 0.0; // ALiBi slope of head h (0: none)
  if (p.alibi_n > 0u) {
    slope = select(pow(p.alibi_m1, f32(2u * (h - p.alibi_n) + 1u)), pow(p.alibi_m0, f32(h + 1u)), h < p.alibi_n);
  }
  if (lid == 0u) {
    let t_lo = j0 / p.group;
    let t_hi = (min(j0 + ROWS, n_rows) - 1u) / p.group;
    let lo = max(first_visible(p.start_pos + t_lo), sp * p.split_len);
    let hi = min(end_visible(p.start_pos + t_hi), (sp + 1u) * p.split_len);
    range_sh = vec2<u32>(lo, max(lo, hi));
  }
  for (var e = lid; e < ROWS * H4; e += WG_SIZE) {
    let rr = e / H4;
    let d = (e % H4) * 4u;
    let jj = j0 + rr;
    var v = vec4<f32>(0.0);
    if (jj < n_rows) {
      let b = (jj / p.group) * p.q_stride + (kh * p.group + jj % p.group) * HD + d;
      if (d + 4u <= HD) {
        v = vec4<f32>(q[b], q[b + 1u], q[b + 2u], q[b + 3u]);
      } else {
        for (var u = 0u; u < 4u; u++) {
          if (d + u < HD) { v[u] = q[b + u]; }
        }
      }
    }
    q_sh[rr * P4 + e % H4] = v;
  }
  // The tile loop holds barriers: its bounds must be uniform in the analysis's eyes, not just in fact.
  let range = workgroupUniformLoad(&range_sh);
  let lo = range.x;
  let hi = range.y;
  let kv_off = p.kv_base + kh * HD;

  var m = NEG_BIG;
  var l = 0.0;
  var acc: array<vec4<f32>, MAX_D4>; // dims 4·(c + i·TPR) … +3
  for (var k0 = lo; k0 < hi; k0 += KEYS) {
    let cnt = min(KEYS, hi - k0);
    workgroupBarrier(); // the previous tile is consumed (and q_sh is written before the first)
    for (var e = lid; e < KEYS * H4; e += WG_SIZE) {
      let kk = e / H4;
      let d = (e % H4) * 4u;
      var kv = vec4<F>(F(0.0));
      var vv = vec4<F>(F(0.0));
      if (kk < cnt) {
        let g = kv_off + (k0 + kk) * p.kv_stride + d;
        if (d + 4u <= HD) {
          kv = vec4<F>(k_cache[g], k_cache[g + 1u], k_cache[g + 2u], k_cache[g + 3u]);
          vv = vec4<F>(v_cache[g], v_cache[g + 1u], v_cache[g + 2u], v_cache[g + 3u]);
        } else {
          for (var u = 0u; u < 4u; u++) {
            if (d + u < HD) {
              kv[u] = k_cache[g + u];
              vv[u] = v_cache[g + u];
            }
          }
        }
      }
      k_sh[kk * P4 + e % H4] = kv;
      v_sh[e] = vv;
    }
    workgroupBarrier();
    for (var kk = c; kk < KEYS; kk += TPR) {
      let key = k0 + kk;
      var sc = NEG_BIG;
      if (row_ok && kk < cnt && key < end_visible(pos) && key >= first) {
        var dot_qk = 0.0;
        for (var d = 0u; d < H4; d++) { dot_qk += dot(q_sh[r * P4 + d], vec4<f32>(k_sh[kk * P4 + d])); }
        sc = dot_qk * p.scale;
        if (p.softcap > 0.0) { sc = p.softcap * tanh_safe(sc / p.softcap); }
        sc -= slope * abs(f32(key) - f32(pos));
      }
      s_sh[r * SP + kk] = sc;
    }
    workgroupBarrier();
    var tile_max = NEG_BIG;
    for (var kk = 0u; kk < cnt; kk++) { tile_max = max(tile_max, s_sh[r * SP + kk]); }
    let m_new = max(m, tile_max);
    let alpha = exp(m - m_new);
    m = m_new;
    l *= alpha;
    for (var i = 0u; i < D4; i++) { acc[i] *= alpha; }
    for (var kk = 0u; kk < cnt; kk++) {
      let s = s_sh[r * SP + kk];
      if (s > MASKED) {
        let e = exp(s - m_new);
        l += e;
        for (var i = 0u; i < D4; i++) {
          let d4 = c + i * TPR;
          if (d4 < H4) { acc[i] += e * vec4<f32>(v_sh[kk * H4 + d4]); }
        }
      }
    }
  }

  if (row_ok && p.is_direct != 0u) {
    let inv = 1.0 / l;
    let o = t * p.q_stride + h * HD;
    for (var i = 0u; i < D4; i++) {
      let d = (c + i * TPR) * 4u;
      for (var u = 0u; u < 4u; u++) {
        if (d + u < HD) { out[o + d + u] = acc[i][u] * inv; }
      }
    }
  } else if (row_ok) {
    // A split that sees none of this row's positions leaves m = NEG_BIG, l = 0: attention_combine weighs it 0.
    let pb = ((t * ids.nwg.y * p.group + h) * p.n_splits + sp) * (HD + 2u); // n_heads = n_kv_heads·group
    if (c == 0u) { partial[pb] = m; partial[pb + 1u] = l; }
    for (var i = 0u; i < D4; i++) {
      let d = (c + i * TPR) * 4u;
      for (var u = 0u; u < 4u; u++) {
        if (d + u < HD) { partial[pb + 2u + d + u] = acc[i][u]; }
      }
    }
  }
}
