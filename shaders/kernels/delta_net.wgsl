// delta_net: qwen35's gated DeltaNet token mixer (Ops.deltaNet), five entries recorded in order in one step:
//   `conv`       conv[t, c] = silu(Σ_k kernel[c, k] · window[t + k, c]) over the window [state ‖ mixed] of taps − 1 + n
//                rows (the state reads as zeros when `fresh`); one invocation per (t, c), all tokens in parallel.
//   `update`     the conv state = the window's last taps − 1 rows; one invocation per channel (after `conv`).
//   `l2norm`     each q and k head of conv, in place: x / sqrt(Σx² + eps); one invocation per (t, key head of q|k).
//   `rule`       the gated delta rule, one invocation per state row (value head h, row j), tokens in order:
//                S_j ·= exp(softplus(alpha + dt_bias)·a); d = (v_j − S_j·k)·sigmoid(beta); S_j += d·k;
//                out[t, h·hv + j] = (S_j·q)/sqrt(hk). Row j depends on no other row, so rows run in parallel.
//   `rule_heads` the same rule for a prefill (n > 1): one workgroup per value head, one invocation per state row
//                (WG_SIZE = head_v), the row held in registers for the whole step (head_k ≤ 128) and each tile of
//                RULE_TILE tokens' k, q and gates staged once in workgroup memory for all rows of the head (k and q
//                as F: f16 on the f16 path, like attention_prefill's K/V tiles; they are L2-normalised, |x| ≤ 1).
//   `gated_norm` out row of head h, in place: rmsnorm(o)·norm·silu(z); one invocation per (t, h).
// Value head h reads key head h mod n_k (ggml's repeat). State, sums and every buffer f32 (ggml's ops are f32); only
// rule_heads' k/q tile is F.
// With `seqs` (a step of several sequences, ≤ 8 rows per dispatch) each row of main, update and rule is one token of
// its own sequence: its window is [its state ‖ its row], update and rule run per (row, channel / state row); l2norm
// and gated_norm are row-wise anyway. rule_heads is for one sequence only.
// Dispatch: 1-D, (gx, gy). Reference: deltaNetRows (src/backend/delta-net.ts).

struct Params {
  n: u32,
  channels: u32,    // conv channels: 2·n_k·head_k + n_v·head_v
  taps: u32,
  mixed_cols: u32,
  state_at: u32,    // f32 index of this layer's state in this slot: conv (taps − 1, channels), then (n_v, head_v, head_k)
  fresh: u32,       // 1: the sequence starts here, the old state reads as zeros
  head_k: u32,
  n_k: u32,
  head_v: u32,
  n_v: u32,
  out_cols: u32,
  z_cols: u32,
  beta_cols: u32,
  alpha_cols: u32,
  conv_cols: u32,
  eps: f32,
  row0: u32,        // first row of mixed, conv, beta, alpha, out the n rows of main / update / rule start at
  seqs: u32,        // 0: the n rows are one sequence at state_at; else each row is its own sequence (seq_at, seq_fresh)
  seq_fresh: u32,   // bit t: row t's sequence starts there
  seq_at0: u32,    // seq_at0 … seq_at7: f32 index of row t's state (t < 8)
  seq_at1: u32,
  seq_at2: u32,
  seq_at3: u32,
  seq_at4: u32,
  seq_at5: u32,
  seq_at6: u32,
  seq_at7: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> mixed: array<f32>;         // (n, mixed_cols) f32 q | k | v
@group(0) @binding(2) var<storage, read_write> state: array<f32>;   // (nSlots, Σ layer sizes) f32
@group(0) @binding(3) var<storage, read> kernel: array<f32>;        // (channels, taps) f32
@group(0) @binding(4) var<storage, read_write> conv: array<f32>;    // (n, conv_cols) f32 scratch
@group(0) @binding(5) var<storage, read> beta: array<f32>;          // (n, beta_cols) f32
@group(0) @binding(6) var<storage, read> alpha: array<f32>;         // (n, alpha_cols) f32
@group(0) @binding(7) var<storage, read> dt_bias: array<f32>;       // (n_v) f32
@group(0) @binding(8) var<storage, read> a: array<f32>;             // (n_v) f32
@group(0) @binding(9) var<storage, read_write> out: array<f32>;     // (n, out_cols) f32
@group(0) @binding(10) var<storage, read> z: array<f32>;            // (n, z_cols) f32
@group(0) @binding(11) var<storage, read> norm: array<f32>;         // (head_v) f32

fn window(r: u32, c: u32) -> f32 {
  let d = p.taps - 1u;
  if (r < d) { return select(state[p.state_at + r * p.channels + c], 0.0, p.fresh != 0u); }
  return mixed[(p.row0 + r - d) * p.mixed_cols + c];
}

fn seq_at(t: u32) -> u32 {
  switch t {
    case 0u: { return p.seq_at0; }
    case 1u: { return p.seq_at1; }
    case 2u: { return p.seq_at2; }
    case 3u: { return p.seq_at3; }
    case 4u: { return p.seq_at4; }
    case 5u: { return p.seq_at5; }
    case 6u: { return p.seq_at6; }
    default: { return p.seq_at7; }
  }
}
fn seq_fresh(t: u32) -> bool { return ((p.seq_fresh >> t) & 1u) != 0u; }

// Tap k of output row t: window row t + k of the step's one sequence, or row k of row t's own window (seqs).
fn tap(t: u32, k: u32, c: u32) -> f32 {
  if (p.seqs == 0u) { return window(t + k, c); }
  if (k + 1u < p.taps) { return select(state[seq_at(t) + k * p.channels + c], 0.0, seq_fresh(t)); }
  return mixed[(p.row0 + t) * p.mixed_cols + c];
}

fn silu(x: f32) -> f32 { return x / (1.0 + exp(-x)); }

fn index(ids: Ids) -> u32 { return (ids.wg.y * ids.nwg.x + ids.wg.x) * WG_SIZE + ids.lid; }

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  let g = index(ids);
  if (g >= p.n * p.channels) { return; }
  let t = g / p.channels;
  let c = g % p.channels;
  var sum = 0.0;
  for (var k = 0u; k < p.taps; k++) { sum += kernel[c * p.taps + k] * tap(t, k, c); }
  conv[(p.row0 + t) * p.conv_cols + c] = silu(sum);
}

@compute @workgroup_size(WG_SIZE)
fn update(ids: Ids) {
  let g = index(ids);
  if (g >= select(1u, p.n, p.seqs != 0u) * p.channels) { return; } // per channel, or per (row, channel) with seqs
  let t = g / p.channels;
  let c = g % p.channels;
  let at = select(p.state_at, seq_at(t), p.seqs != 0u);
  // Ascending rows: row r reads window row n + r ≥ r + 1 (1 + r with seqs), which this loop has not overwritten yet.
  for (var r = 0u; r + 1u < p.taps; r++) {
    var v: f32;
    if (p.seqs == 0u) { v = window(p.n + r, c); } else { v = tap(t, 1u + r, c); }
    state[at + r * p.channels + c] = v;
  }
}

@compute @workgroup_size(WG_SIZE)
fn l2norm(ids: Ids) {
  let g = index(ids);
  let heads = 2u * p.n_k;
  if (g >= p.n * heads) { return; }
  let at = (g / heads) * p.conv_cols + (g % heads) * p.head_k;
  var ss = 0.0;
  for (var i = 0u; i < p.head_k; i++) { ss += conv[at + i] * conv[at + i]; }
  let inv = 1.0 / sqrt(ss + p.eps);
  for (var i = 0u; i < p.head_k; i++) { conv[at + i] *= inv; }
}

fn softplus(x: f32) -> f32 { return select(log(1.0 + exp(x)), x, x > 20.0); }

@compute @workgroup_size(WG_SIZE)
fn rule(ids: Ids) {
  let gs = index(ids);
  let per = p.n_v * p.head_v;
  let seqs = p.seqs != 0u;
  if (gs >= select(1u, p.n, seqs) * per) { return; } // per state row, or per (row, state row) with seqs
  let sq = gs / per; // row of the step with seqs, else 0
  let g = gs % per;
  let h = g / p.head_v;
  let j = g % p.head_v;
  let row = select(p.state_at, seq_at(sq), seqs) + (p.taps - 1u) * p.channels + g * p.head_k; // S[h][j, :]
  if (select(p.fresh != 0u, seq_fresh(sq), seqs)) { for (var i = 0u; i < p.head_k; i++) { state[row + i] = 0.0; } }
  let t_end = select(p.row0 + p.n, p.row0 + sq + 1u, seqs);
  let q_at = (h % p.n_k) * p.head_k;
  let k_at = p.n_k * p.head_k + q_at;
  let v_at = 2u * p.n_k * p.head_k + g;
  let scale = 1.0 / sqrt(f32(p.head_k));
  for (var t = select(p.row0, p.row0 + sq, seqs); t < t_end; t++) {
    let c = t * p.conv_cols;
    let decay = exp(softplus(alpha[t * p.alpha_cols + h] + dt_bias[h]) * a[h]);
    let b = 1.0 / (1.0 + exp(-beta[t * p.beta_cols + h]));
    var sk = 0.0;
    for (var i = 0u; i < p.head_k; i++) {
      let s = state[row + i] * decay;
      state[row + i] = s;
      sk += s * conv[c + k_at + i];
    }
    let d = (conv[c + v_at] - sk) * b;
    var o = 0.0;
    for (var i = 0u; i < p.head_k; i++) {
      let s = state[row + i] + conv[c + k_at + i] * d;
      state[row + i] = s;
      o += s * conv[c + q_at + i];
    }
    out[t * p.out_cols + g] = o * scale;
  }
}

const RULE_TILE: u32 = 8u;
var<workgroup> tile_kq: array<F, 2048>; // (RULE_TILE, 2, head_k ≤ 128) F: k then q of each token of the tile
var<workgroup> tile_gate: array<f32, 16>; // (RULE_TILE, 2) f32: decay, sigmoid(beta)

@compute @workgroup_size(WG_SIZE)
fn rule_heads(ids: Ids) {
  let h = ids.wg.y * ids.nwg.x + ids.wg.x; // value head (uniform in the workgroup)
  let j = ids.lid; // state row
  let hk = p.head_k;
  let row = p.state_at + (p.taps - 1u) * p.channels + (h * p.head_v + j) * hk; // S[h][j, :]
  var s: array<f32, 128>; // S[h][j, :] for the whole step
  for (var i = 0u; i < hk; i++) { s[i] = select(state[row + i], 0.0, p.fresh != 0u); }
  let q_at = (h % p.n_k) * hk;
  let k_at = p.n_k * hk + q_at;
  let v_at = 2u * p.n_k * hk + h * p.head_v + j;
  let scale = 1.0 / sqrt(f32(hk));
  for (var t0 = 0u; t0 < p.n; t0 += RULE_TILE) {
    let nt = min(RULE_TILE, p.n - t0);
    workgroupBarrier(); // the previous tile is consumed
    for (var e = j; e < nt * 2u * hk; e += WG_SIZE) {
      let r = e % (2u * hk);
      let c = (t0 + e / (2u * hk)) * p.conv_cols;
      if (r < hk) { tile_kq[e] = F(conv[c + k_at + r]); } else { tile_kq[e] = F(conv[c + q_at + r - hk]); }
    }
    if (j < nt) {
      let t = t0 + j;
      tile_gate[2u * j] = exp(softplus(alpha[t * p.alpha_cols + h] + dt_bias[h]) * a[h]);
      tile_gate[2u * j + 1u] = 1.0 / (1.0 + exp(-beta[t * p.beta_cols + h]));
    }
    workgroupBarrier();
    for (var tt = 0u; tt < nt; tt++) {
      let kb = tt * 2u * hk;
      let decay = tile_gate[2u * tt];
      var sk = 0.0;
      for (var i = 0u; i < hk; i++) {
        s[i] *= decay;
        sk += s[i] * f32(tile_kq[kb + i]);
      }
      let t = t0 + tt;
      let d = (conv[t * p.conv_cols + v_at] - sk) * tile_gate[2u * tt + 1u];
      var o = 0.0;
      for (var i = 0u; i < hk; i++) {
        s[i] += f32(tile_kq[kb + i]) * d;
        o += s[i] * f32(tile_kq[kb + hk + i]);
      }
      out[t * p.out_cols + h * p.head_v + j] = o * scale;
    }
  }
  for (var i = 0u; i < hk; i++) { state[row + i] = s[i]; }
}

@compute @workgroup_size(WG_SIZE)
fn gated_norm(ids: Ids) {
  let g = index(ids);
  if (g >= p.n * p.n_v) { return; }
  let t = g / p.n_v;
  let h = g % p.n_v;
  let at = t * p.out_cols + h * p.head_v;
  let z_at = t * p.z_cols + h * p.head_v;
  var ss = 0.0;
  for (var j = 0u; j < p.head_v; j++) { ss += out[at + j] * out[at + j]; }
  let inv = 1.0 / sqrt(ss / f32(p.head_v) + p.eps);
  for (var j = 0u; j < p.head_v; j++) { out[at + j] = out[at + j] * inv * norm[j] * silu(z[z_at + j]); }
}
