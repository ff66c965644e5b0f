// gated_attn: qwen35's gated full attention around the attention kernel. Entry `main` (Ops.splitHeadPairs): the
// per-head [q | gate] rows of qg (n, 2·cols) split into q and gate (n, cols): q[t, h·D + i] = qg[t, 2h·D + i],
// gate[t, h·D + i] = qg[t, (2h + 1)·D + i]. Entry `mul_sigmoid` (Ops.mulSigmoid): x[i] ·= sigmoid(gate[i]) over
// (n, cols). One invocation per output value; f32.
// Dispatch: 1-D, (gx, gy). Reference: hostSplitHeadPairs, hostMulSigmoid (src/backend/delta-net.ts).

struct Params {
  n: u32,
  cols: u32,
  head_dim: u32,
  qg_cols: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> qg: array<f32>;          // (n, qg_cols) f32
@group(0) @binding(2) var<storage, read_write> x: array<f32>;     // (n, cols) f32: q, or the attention output
@group(0) @binding(3) var<storage, read_write> gate: array<f32>;  // (n, cols) f32

fn index(ids: Ids) -> u32 { return (ids.wg.y * ids.nwg.x + ids.wg.x) * WG_SIZE + ids.lid; }

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  let g = index(ids);
  if (g >= p.n * p.cols) { return; }
  let t = g / p.cols;
  let c = g % p.cols;
  let src = t * p.qg_cols + 2u * (c / p.head_dim) * p.head_dim + c % p.head_dim;
  x[g] = qg[src];
  gate[g] = qg[src + p.head_dim];
}

@compute @workgroup_size(WG_SIZE)
fn mul_sigmoid(ids: Ids) {
  let g = index(ids);
  if (g >= p.n * p.cols) { return; }
  x[g] = x[g] / (1.0 + exp(-gate[g]));
}
