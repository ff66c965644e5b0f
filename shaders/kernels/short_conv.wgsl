// short_conv: lfm2's short gated convolution (Ops.shortConv). bcx (n, bcx_cols) holds B | C | x blocks of `channels`
// columns; the window of channel c is [state ‖ B·x] (taps − 1 + n rows; the state reads as zeros when `fresh`).
// Entry `main`: out[t, c] = C[t, c] · Σ_k kernel[c, k] · window[t + k, c], one invocation per (t, c), all tokens in
// parallel. Entry `update`: state = the window's last taps − 1 rows, one invocation per channel (after `main`, in
// its own dispatch, so `main` reads the old state). Entry `copy`: state[dst_at + i] = state[state_at + i] for i < n
// (a slot's whole state into another slot: WebGPU forbids buffer copies within one buffer). Everything f32
// (ggml_ssm_conv accumulates in f32). A step of several sequences runs `main` and `update` once per sequence (its
// rows from row0, its state at state_at).
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
  row0: u32,       // first row of bcx and out the step's n rows start at (one sequence of a multi-sequence step)
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

fn index(ids: Ids) -> u32 { return (ids.wg.y * ids.nwg.x + ids.wg.x) * WG_SIZE + ids.lid; }

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  let g = index(ids);
  if (g >= p.n * p.channels) { return; }
  let t = g / p.channels;
  let c = g % p.channels;
  var sum = 0.0;
  for (var k = 0u; k < p.taps; k++) { sum += kernel[c * p.taps + k] * window(t + k, c); }
  let row = p.row0 + t;
  out[row * p.out_cols + c] = bcx[row * p.bcx_cols + p.channels + c] * sum;
}

@compute @workgroup_size(WG_SIZE)
fn update(ids: Ids) {
  let c = index(ids);
  if (c >= p.channels) { return; }
  // Ascending rows: row r reads window row n + r ≥ r + 1, which this loop has not overwritten yet.
  for (var r = 0u; r + 1u < p.taps; r++) {
    let v = window(p.n + r, c);
    state[p.state_at + r * p.channels + c] = v;
  }
}

@compute @workgroup_size(WG_SIZE)
fn copy(ids: Ids) {
  let i = index(ids);
  if (i < p.n) { state[p.dst_at + i] = state[p.state_at + i]; }
}
