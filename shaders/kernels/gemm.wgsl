// gemm: out[t, out_offset + r] = Σ_k W[r, k]·x[t, k] (+ bias[r]) — tiled dequant matrix × matrix for prefill.
// Composed after a reduce_*.wgsl (for WG_SIZE/Ids), bits.wgsl and one quant snippet (load4/load1).
// Dispatch: (ceil(n_rows/32), ceil(n/32)) workgroups of 64 invocations (8×8), each a 32 tokens × 32 rows tile,
// 4×4 outputs per invocation; K is walked in tiles of 32 staged in workgroup memory as F (f16 on the f16 path),
// products accumulated in f32. Reference: as gemv (NMSE).

struct Params {
  k: u32,
  n_rows: u32,
  row_stride: u32,
  x_stride: u32,
  out_stride: u32,
  out_offset: u32,
  has_bias: u32,
  x_offset: u32,
  n: u32,            // tokens (rows of x)
}

const TILE: u32 = 32u;
const PAD: u32 = 33u; // row pitch of the tiles (avoids bank conflicts)

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> weights: array<u32>;       // (n_rows, row_stride) u32
@group(0) @binding(2) var<storage, read> x: array<f32>;             // (n, x_stride) f32
@group(0) @binding(3) var<storage, read_write> out: array<f32>;     // (n, out_stride) f32
@group(0) @binding(4) var<storage, read> bias: array<f32>;          // (out_stride) f32

var<workgroup> tile_w: array<F, 1056>; // (32 rows, 33) weight tile
var<workgroup> tile_x: array<F, 1056>; // (32 tokens, 33) activation tile

@compute @workgroup_size(64)
fn main(ids: Ids) {
  let lid = ids.lid;
  let row0 = ids.wg.x * TILE;
  let tok0 = ids.wg.y * TILE;
  let tx = lid & 7u;  // rows tx·4 … tx·4+3 of the tile
  let ty = lid >> 3u; // tokens ty·4 … ty·4+3 of the tile
  var acc: array<vec4<f32>, 4>; // acc[token][row]
  for (var k0 = 0u; k0 < p.k; k0 += TILE) {
    // Weight tile: 32 rows × 8 groups of 4 = 256 loads, 4 per invocation.
    for (var j = 0u; j < 4u; j++) {
      let idx = lid + 64u * j;
      let r = idx >> 3u;
      let kq = (idx & 7u) * 4u;
      let row = row0 + r;
      let kk = k0 + kq;
      var v = vec4<f32>(0.0);
      if (row < p.n_rows) {
        let base = row * p.row_stride;
        if (kk + 4u <= p.k) {
          v = load4(base, kk);
        } else {
          for (var c = 0u; c < 4u; c++) {
            if (kk + c < p.k) { v[c] = load1(base, kk + c); }
          }
        }
      }
      let o = r * PAD + kq;
      tile_w[o] = F(v.x); tile_w[o + 1u] = F(v.y); tile_w[o + 2u] = F(v.z); tile_w[o + 3u] = F(v.w);
    }
    // Activation tile: 32 tokens × 32 = 1024 values, 16 per invocation.
    for (var j = 0u; j < 16u; j++) {
      let idx = lid + 64u * j;
      let t = idx >> 5u;
      let kk = idx & 31u;
      var v = 0.0;
      if (tok0 + t < p.n && k0 + kk < p.k) { v = x[p.x_offset + (tok0 + t) * p.x_stride + k0 + kk]; }
      tile_x[t * PAD + kk] = F(v);
    }
    workgroupBarrier();
    for (var kk = 0u; kk < TILE; kk++) {
      let w = vec4<f32>(f32(tile_w[(tx * 4u) * PAD + kk]), f32(tile_w[(tx * 4u + 1u) * PAD + kk]),
                        f32(tile_w[(tx * 4u + 2u) * PAD + kk]), f32(tile_w[(tx * 4u + 3u) * PAD + kk]));
      for (var i = 0u; i < 4u; i++) {
        acc[i] += f32(tile_x[(ty * 4u + i) * PAD + kk]) * w;
      }
    }
    workgroupBarrier();
  }
  for (var i = 0u; i < 4u; i++) {
    let t = tok0 + ty * 4u + i;
    for (var c = 0u; c < 4u; c++) {
      let row = row0 + tx * 4u + c;
      if (t < p.n && row < p.n_rows) {
        let col = p.out_offset + row;
        let v = acc[i][c];
        out[t * p.out_stride + col] = select(v, v + bias[col], p.has_bias != 0u);
      }
    }
  }
}
