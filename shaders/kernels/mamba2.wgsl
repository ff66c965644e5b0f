// mamba2: the Mamba-2 token mixer (Ops.mamba2), four entries recorded in order in one step:
//   `main`       conv[t, c] = silu(Σ_k kernel[c, k] · window[t + k, c] + bias[c]) over the window [state ‖ xBC] of
//                taps − 1 + n rows (the state reads as zeros when `fresh`); one invocation per (t, c), tokens in parallel.
//   `update`     the conv state = the window's last taps − 1 rows; one invocation per channel (after `main`).
//   `scan`       the selective scan, one invocation per state row (head h, channel i), tokens in order:
//                dt = softplus(dt_raw + dt_bias[h]); S ·= exp(dt · a[h]); S += B · (x · dt); y = S · C + D[h] · x;
//                out[t, h·head_dim + i] = y · silu(z). B and C are group h / (n_heads / n_groups)'s. Rows are independent.
//   `scan_heads` the same scan for a prefill (n > 1): one workgroup per head, one invocation per channel (WG_SIZE =
//                head_dim), the state row held in registers for the whole step (d_state ≤ 128) and each tile of
//                SCAN_TILE tokens' B, C and dt staged once in workgroup memory for all channels of the head (B and C
//                as F: f16 on the f16 path, like attention_prefill's K/V tiles; dt stays f32).
//   `gated_norm` each group of inner / n_groups columns of out, in place: rmsnorm · norm; one workgroup per (t, group)
//                (sum of squares with one workgroup reduction).
// State, sums and every buffer f32 (ggml's ssm ops are f32); only scan_heads' B/C tile is F.
// With `seqs` (a step of several sequences, ≤ 8 rows per dispatch) each row of main, update and scan is one token of
// its own sequence: its window is [its state ‖ its row], update and scan run per (row, channel / state row);
// gated_norm is row-wise anyway. scan_heads is for one sequence only.
// Dispatch: 1-D, (gx, gy). Reference: hostMamba2 (src/backend/mamba2.ts).

struct Params {
  n: u32,
  channels: u32,    // conv channels x | B | C: inner + 2·n_groups·d_state
  taps: u32,
  zx_cols: u32,
  state_at: u32,    // f32 index of this layer's state in this slot: conv (taps − 1, channels), then (inner, d_state)
  fresh: u32,       // 1: the sequence starts here, the old state reads as zeros
  inner: u32,       // n_heads · head_dim
  d_state: u32,
  n_groups: u32,
  n_heads: u32,
  head_dim: u32,
  out_cols: u32,
  conv_cols: u32,
  has_bias: u32,
  eps: f32,
  row0: u32,        // first row of zx, conv and out the n rows of main / update / scan start at
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
@group(0) @binding(1) var<storage, read> zx: array<f32>;            // (n, zx_cols) f32 z | xBC | dt
@group(0) @binding(2) var<storage, read_write> state: array<f32>;   // (nSlots, Σ layer sizes) f32
@group(0) @binding(3) var<storage, read> kernel: array<f32>;        // (channels, taps) f32
@group(0) @binding(4) var<storage, read_write> conv: array<f32>;    // (n, conv_cols) f32 scratch x | B | C
@group(0) @binding(5) var<storage, read> bias: array<f32>;          // (channels) f32 (unread when has_bias is 0)
@group(0) @binding(6) var<storage, read> dt_bias: array<f32>;       // (n_heads) f32
@group(0) @binding(7) var<storage, read> a: array<f32>;             // (n_heads) f32
@group(0) @binding(8) var<storage, read> d: array<f32>;             // (n_heads) f32
@group(0) @binding(9) var<storage, read_write> out: array<f32>;     // (n, out_cols) f32
@group(0) @binding(10) var<storage, read> norm: array<f32>;         // (inner) f32

fn window(r: u32, c: u32) -> f32 {
  let w = p.taps - 1u;
  if (r < w) { return select(state[p.state_at + r * p.channels + c], 0.0, p.fresh != 0u); }
  return zx[(p.row0 + r - w) * p.zx_cols + p.inner + c];
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
  return zx[(p.row0 + t) * p.zx_cols + p.inner + c];
}

fn silu(x: f32) -> f32 { return x / (1.0 + exp(-x)); }

fn softplus(x: f32) -> f32 { return select(log(1.0 + exp(x)), x, x > 20.0); }

fn index(ids: Ids) -> u32 { return (ids.wg.y * ids.nwg.x + ids.wg.x) * WG_SIZE + ids.lid; }

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  let g = index(ids);
  if (g >= p.n * p.channels) { return; }
  let t = g / p.channels;
  let c = g % p.channels;
  var sum = 0.0;
  for (var k = 0u; k < p.taps; k++) { sum += kernel[c * p.taps + k] * tap(t, k, c); }
  if (p.has_bias != 0u) { sum += bias[c]; }
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
fn scan(ids: Ids) {
  let gs = index(ids);
  let seqs = p.seqs != 0u;
  if (gs >= select(1u, p.n, seqs) * p.inner) { return; } // per state row, or per (row, state row) with seqs
  let sq = gs / p.inner; // row of the step with seqs, else 0
  let g = gs % p.inner;
  let h = g / p.head_dim;
  let row = select(p.state_at, seq_at(sq), seqs) + (p.taps - 1u) * p.channels + g * p.d_state; // S[h][i, :]
  if (select(p.fresh != 0u, seq_fresh(sq), seqs)) { for (var j = 0u; j < p.d_state; j++) { state[row + j] = 0.0; } }
  let t_end = select(p.row0 + p.n, p.row0 + sq + 1u, seqs);
  let grp = h / (p.n_heads / p.n_groups);
  let b_at = p.inner + grp * p.d_state;
  let c_at = p.inner + p.n_groups * p.d_state + grp * p.d_state;
  for (var t = select(p.row0, p.row0 + sq, seqs); t < t_end; t++) {
    let cr = t * p.conv_cols;
    let zr = t * p.zx_cols;
    let dt = softplus(zx[zr + p.inner + p.channels + h] + dt_bias[h]);
    let decay = exp(dt * a[h]);
    let x = conv[cr + g];
    let x_dt = x * dt;
    var y = 0.0;
    for (var j = 0u; j < p.d_state; j++) {
      let s = state[row + j] * decay + conv[cr + b_at + j] * x_dt;
      state[row + j] = s;
      y += s * conv[cr + c_at + j];
    }
    out[t * p.out_cols + g] = (y + x * d[h]) * silu(zx[zr + g]);
  }
}

const SCAN_TILE: u32 = 8u;
var<workgroup> tile_bc: array<F, 2048>; // (SCAN_TILE, 2, d_state ≤ 128) F: B then C of each token of the tile
var<workgroup> tile_dt: array<f32, 8>; // (SCAN_TILE) f32 softplus(dt + dt_bias)

@compute @workgroup_size(WG_SIZE)
fn scan_heads(ids: Ids) {
  let h = ids.wg.y * ids.nwg.x + ids.wg.x; // head (uniform in the workgroup)
  let g = h * p.head_dim + ids.lid; // channel
  let ds = p.d_state;
  let row = p.state_at + (p.taps - 1u) * p.channels + g * ds; // S[h][i, :]
  var s: array<f32, 128>; // S[h][i, :] for the whole step
  for (var j = 0u; j < ds; j++) { s[j] = select(state[row + j], 0.0, p.fresh != 0u); }
  let grp = h / (p.n_heads / p.n_groups);
  let b_at = p.inner + grp * ds;
  let c_at = p.inner + p.n_groups * ds + grp * ds;
  for (var t0 = 0u; t0 < p.n; t0 += SCAN_TILE) {
    let nt = min(SCAN_TILE, p.n - t0);
    workgroupBarrier(); // the previous tile is consumed
    for (var e = ids.lid; e < nt * 2u * ds; e += WG_SIZE) {
      let r = e % (2u * ds);
      let c = (t0 + e / (2u * ds)) * p.conv_cols;
      if (r < ds) { tile_bc[e] = F(conv[c + b_at + r]); } else { tile_bc[e] = F(conv[c + c_at + r - ds]); }
    }
    if (ids.lid < nt) { tile_dt[ids.lid] = softplus(zx[(t0 + ids.lid) * p.zx_cols + p.inner + p.channels + h] + dt_bias[h]); }
    workgroupBarrier();
    for (var tt = 0u; tt < nt; tt++) {
      let t = t0 + tt;
      let bb = tt * 2u * ds;
      let dt = tile_dt[tt];
      let decay = exp(dt * a[h]);
      let x = conv[t * p.conv_cols + g];
      let x_dt = x * dt;
      var y = 0.0;
      for (var j = 0u; j < ds; j++) {
        s[j] = s[j] * decay + f32(tile_bc[bb + j]) * x_dt;
        y += s[j] * f32(tile_bc[bb + ds + j]);
      }
      out[t * p.out_cols + g] = (y + x * d[h]) * silu(zx[t * p.zx_cols + g]);
    }
  }
  for (var j = 0u; j < ds; j++) { state[row + j] = s[j]; }
}

@compute @workgroup_size(WG_SIZE)
fn gated_norm(ids: Ids) {
  let g = ids.wg.y * ids.nwg.x + ids.wg.x; // one workgroup per (t, group)
  let t = g / p.n_groups;
  let grp = g % p.n_groups;
  // A padding workgroup (g past the last) works on no columns, but still joins the reduction's barriers.
  let cols = select(0u, p.inner / p.n_groups, g < p.n * p.n_groups);
  let at = t * p.out_cols + grp * cols;
  var ss = 0.0;
  for (var i = ids.lid; i < cols; i += WG_SIZE) { let v = out[at + i]; ss += v * v; }
  let inv = 1.0 / sqrt(wg_sum(ss, ids) / f32(max(cols, 1u)) + p.eps);
  for (var i = ids.lid; i < cols; i += WG_SIZE) { out[at + i] = out[at + i] * inv * norm[grp * cols + i]; }
}
