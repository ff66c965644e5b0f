// gemv_rows: out[t, out_offset + r] = Σ_k W[r, k]·x[t, k] (+ bias[r]) with one weight row per invocation — the
// decode kernel for short rows (K ≤ 256), where a workgroup per row would be mostly idle lanes and barriers.
// No reduction, no barrier. Composed after a reduce_*.wgsl (Ids, WG_SIZE), bits.wgsl and one quant snippet.
// Dispatch: (gx, gy, n) workgroups of WG_SIZE rows (row = (wg.y·gx + wg.x)·WG_SIZE + lid), token t = wg.z.
// f32 accumulation in k order. Reference: as gemv (NMSE).

struct Params {
  k: u32,
  n_rows: u32,
  row_stride: u32,
  x_stride: u32,
  out_stride: u32,
  out_offset: u32,
  has_bias: u32,
  x_offset: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> weights: array<u32>;       // (n_rows, row_stride) u32, repacked blocks
@group(0) @binding(2) var<storage, read> x: array<f32>;             // (n, x_stride) f32
@group(0) @binding(3) var<storage, read_write> out: array<f32>;     // (n, out_stride) f32
@group(0) @binding(4) var<storage, read> bias: array<f32>;          // (out_stride) f32, read when has_bias

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  let row = (ids.wg.y * ids.nwg.x + ids.wg.x) * WG_SIZE + ids.lid;
  if (row >= p.n_rows) { return; }
  let t = ids.wg.z;
  let base = row * p.row_stride;
  let xb = p.x_offset + t * p.x_stride;
  let k4 = p.k & ~3u;
  var acc = 0.0;
  for (var i = 0u; i < k4; i += 4u) {
    acc += dot(load4(base, i), vec4<f32>(x[xb + i], x[xb + i + 1u], x[xb + i + 2u], x[xb + i + 3u]));
  }
  for (var i = k4; i < p.k; i++) {
    acc += load1(base, i) * x[xb + i];
  }
  let col = p.out_offset + row;
  out[t * p.out_stride + col] = select(acc, acc + bias[col], p.has_bias != 0u);
}
