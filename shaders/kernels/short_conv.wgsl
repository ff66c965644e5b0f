// short_conv: lfm2's short gated convolution (Ops.shortConv). bcx (n, bcx_cols) holds B | C | x blocks of `channels`
// columns; the window of channel c is [state ‖ B·x] (taps − 1 + n rows; the state reads as zeros when `fresh`).
// Entry `main`: out[t, c] = C[t, c] · Σ_k kernel[c, k] · window[t + k, c], one invocation per (t, c), all tokens in
// parallel. Entry `update`: state = the window's last taps − 1 rows, one invocation per channel (after `main`, in
// its own dispatch, so `main` reads the old state). Entry `copy`: state[dst_at + i] = state[state_at + i] for i < n
// (a slot's whole state into another slot: WebGPU forbids buffer copies within one buffer). Everything f32
// (ggml_ssm_conv accumulates in f32). With `seqs` (a step of several sequences, ≤ 8 rows per dispatch) each row is one
// token of its own sequence: its window is [its state ‖ its row], `update` runs per (row, channel).
// Dispatch: 1-D, (gx, gy). Reference: shortConvRows (src/backend/short-conv.ts).

struct Params {
  n: u32,
  channels: u32,
  taps: u32,
  bcx_cols: u32,
  out_cols: u32,
  state_at: u32,   // f32 index of this layer's state in this slot: (taps − 1, channels)
  fresh: u32,      // 1: the sequence starts here, the old state reads as zeros
  dst_at: u32,     // `copy` only: f32 index of the destination slot's state
  row0: u32,       // first row of bcx and out the n rows start at
  seqs: u32,       // 0: the n rows are one sequence at state_at; else each row is its own sequence (seq_at, seq_fresh)
  seq_fresh: u32,  // bit t: row t's sequence starts there
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
@group(0) @binding(1) var<storage, read> bcx: array<f32>;           // (n, bcx_cols) f32
@group(0) @binding(2) var<storage, read_write> state: array<f32>;   // (nSlots, Σ layer sizes) f32
@group(0) @binding(3) var<storage, read> kernel: array<f32>;        // (channels, taps) f32
@group(0) @binding(4) var<storage, read_write> out: array<f32>;     // (n, out_cols) f32

fn window(r: u32, c: u32) -> f32 {
  let d = p.taps - 1u;
  if (r < d) { return select(state[p.state_at + r * p.channels + c], 0.0, p.fresh != 0u); }
  let row = (p.row0 + r - d) * p.bcx_cols;
  return bcx[row + c] * bcx[row + 2u * p.channels + c];
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
  let d = p.taps - 1u;
  if (k < d) { return select(state[seq_at(t) + k * p.channels + c], 0.0, seq_fresh(t)); }
  let row = (p.row0 + t) * p.bcx_cols;
  return bcx[row + c] * bcx[row + 2u * p.channels + c];
}

fn index(ids: Ids) -> u32 { return (ids.wg.y * ids.nwg.x + ids.wg.x) * WG_SIZE + ids.lid; }

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  let g = index(ids);
  if (g >= p.n * p.channels) { return; }
  let t = g / p.channels;
  let c = g % p.channels;
  var sum = 0.0;
  for (var k = 0u; k < p.taps; k++) { sum += kernel[c * p.taps + k] * tap(t, k, c); }
  let row = p.row0 + t;
  out[row * p.out_cols + c] = bcx[row * p.bcx_cols + p.channels + c] * sum;
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
fn copy(ids: Ids) {
  let i = index(ids);
  if (i < p.n) { state[p.dst_at + i] = state[p.state_at + i]; }
}
