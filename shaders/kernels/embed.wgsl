// embed: out[i, :] = dequant(table[tokens[i], :]) — embedding lookup with dequantization (get_rows).
// Composed after a reduce_*.wgsl (Ids, WG_SIZE), bits.wgsl and one quant snippet. A table split into parts is
// looked up with one dispatch per part; rows outside [row_start, row_start + n_rows) are left to the other parts.
// Dispatch: (ceil(cols / (4·WG_SIZE)), n); 4 elements per invocation. Reference: QuantType.dequantizeRow (exact).

struct Params {
  k: u32,           // row length (named k like every weight-reading kernel: quant snippets read p.k)
  row_stride: u32,  // words per repacked row
  row_start: u32,   // first table row held by this part
  n_rows: u32,      // rows held by this part
  out_stride: u32,  // columns of out
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> weights: array<u32>;     // (n_rows, row_stride) u32
@group(0) @binding(2) var<storage, read> tokens: array<i32>;      // (n) token ids of the step
@group(0) @binding(3) var<storage, read_write> out: array<f32>;   // (n, out_stride) f32

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  let i = ids.wg.y;
  let tok = u32(tokens[i]);
  if (tok < p.row_start || tok >= p.row_start + p.n_rows) { return; }
  let base = (tok - p.row_start) * p.row_stride;
  let c = (ids.wg.x * WG_SIZE + ids.lid) * 4u;
  let o = i * p.out_stride;
  if (c + 4u <= p.k) {
    let v = load4(base, c);
    out[o + c] = v.x; out[o + c + 1u] = v.y; out[o + c + 2u] = v.z; out[o + c + 3u] = v.w;
  } else {
    for (var j = c; j < p.k; j++) { out[o + j] = load1(base, j); }
  }
}
