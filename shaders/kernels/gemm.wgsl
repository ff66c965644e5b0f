// gemm: out[t, out_offset + r] = Σ_k W[r, k]·x[t, k] (+ bias[r]) — tiled dequant matrix × matrix for prefill.
// Composed after a reduce_*.wgsl (for WG_SIZE/Ids), bits.wgsl and one quant snippet (load4/load1).
// A workgroup of WG_SIZE = GX·GY invocations computes a BR = 4·GX rows × BT = GY·TT tokens tile, 4 rows × TT tokens
// per invocation; K is walked in steps of 32 staged in workgroup memory as vec4<f32> of 4 consecutive k, products
// accumulated in f32. The tiles stay f32 on the f16 path too: activations above 65504 (Gemma/Qwen down-projection
// inputs) would overflow f16, and f16 weight tiles round F32/BF16/K-quant values past llama.cpp's tolerance. Dispatch: (ceil(n_rows/BR), ceil(n/BT)) workgroups; the defaults
// (WG_SIZE 64, GX 8, TT 4) give 32 × 32 tiles, the only shape the tests exercise; other shapes must keep
// TT ≤ MAX_TT and (BR + BT)·9·16 bytes of tiles within the device's workgroup storage. Reference: as gemv (NMSE).

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

override GX: u32 = 8u;    // invocations along the rows of a tile, 4 rows each
override TT: u32 = 4u;    // tokens per invocation (≤ MAX_TT)
override GY: u32 = WG_SIZE / GX;  // invocations along the tokens of a tile
override BR: u32 = 4u * GX;       // rows per tile
override BT: u32 = GY * TT;       // tokens per tile

const KT: u32 = 32u;       // k per step
const K4: u32 = KT / 4u;   // vec4s per tile row per step
const P4: u32 = K4 + 1u;   // row pitch of the tiles in vec4s (spreads rows over banks)
const MAX_TT: u32 = 8u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> weights: array<u32>;       // (n_rows, row_stride) u32
@group(0) @binding(2) var<storage, read> x: array<f32>;             // (n, x_stride) f32
@group(0) @binding(3) var<storage, read_write> out: array<f32>;     // (n, out_stride) f32
@group(0) @binding(4) var<storage, read> bias: array<f32>;          // (out_stride) f32

var<workgroup> tile_w: array<vec4<f32>, BR * P4>; // (BR rows, P4) weight tile, 4 consecutive k per vec4
var<workgroup> tile_x: array<vec4<f32>, BT * P4>; // (BT tokens, P4) activation tile, 4 consecutive k per vec4

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  let lid = ids.lid;
  let row0 = ids.wg.x * BR;
  let tok0 = ids.wg.y * BT;
  let tx = lid % GX; // rows tx·4 … tx·4+3 of the tile
  let ty = lid / GX; // tokens ty·TT … ty·TT+TT−1 of the tile
  var acc: array<vec4<f32>, MAX_TT>; // acc[token][row]
  for (var k0 = 0u; k0 < p.k; k0 += KT) {
    // Weight tile: BR rows × K4 groups of 4 (dequantized by the quant snippet).
    for (var idx = lid; idx < BR * K4; idx += WG_SIZE) {
      let r = idx / K4;
      let k4 = idx % K4;
      let row = row0 + r;
      let kk = k0 + k4 * 4u;
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
      tile_w[r * P4 + k4] = v;
    }
    // Activation tile: BT tokens × K4 groups of 4.
    for (var idx = lid; idx < BT * K4; idx += WG_SIZE) {
      let t = idx / K4;
      let k4 = idx % K4;
      let kk = k0 + k4 * 4u;
      var v = vec4<f32>(0.0);
      if (tok0 + t < p.n) {
        let b = p.x_offset + (tok0 + t) * p.x_stride + kk;
        if (kk + 4u <= p.k) {
          v = vec4<f32>(x[b], x[b + 1u], x[b + 2u], x[b + 3u]);
        } else {
          for (var c = 0u; c < 4u; c++) {
            if (kk + c < p.k) { v[c] = x[b + c]; }
          }
        }
      }
      tile_x[t * P4 + k4] = v;
    }
    workgroupBarrier();
    for (var k4 = 0u; k4 < K4; k4++) {
      let w0 = tile_w[(tx * 4u) * P4 + k4];
      let w1 = tile_w[(tx * 4u + 1u) * P4 + k4];
      let w2 = tile_w[(tx * 4u + 2u) * P4 + k4];
      let w3 = tile_w[(tx * 4u + 3u) * P4 + k4];
      for (var i = 0u; i < TT; i++) {
        let xv = tile_x[(ty * TT + i) * P4 + k4];
        acc[i] += vec4<f32>(dot(xv, w0), dot(xv, w1), dot(xv, w2), dot(xv, w3));
      }
    }
    workgroupBarrier();
  }
  for (var i = 0u; i < TT; i++) {
    let t = tok0 + ty * TT + i;
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
