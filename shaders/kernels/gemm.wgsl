// gemm: out[t, out_offset + r] = Σ_k W[r, k]·x[t, k] (+ bias[r]) — tiled dequant matrix × matrix for prefill.
// Composed after a reduce_*.wgsl (for WG_SIZE/Ids), bits.wgsl and one quant snippet (load4/load1).
// A workgroup of WG_SIZE = GX·GY invocations computes a BR = 4·GX rows × BT = GY·TT tokens tile: invocation
// (tx, ty) owns rows tx, tx + GX, tx + 2·GX, tx + 3·GX (strided, so that the 8 lanes of a 128-byte phase read 8
// different bank groups of tile_w: conflict-free, where 4 consecutive rows per lane put every other lane on the same
// banks) × tokens ty·TT … ty·TT + TT − 1. K is walked in steps of 32 staged in workgroup memory as vec4<f32> of 4
// consecutive k; the next step's weights and activations are loaded into registers while the current step's products
// run (double buffering through registers), products accumulated in f32. The tiles stay f32 on the f16 path too:
// activations above 65504 (Gemma/Qwen down-projection inputs) would overflow f16, and f16 weight tiles round
// F32/BF16/K-quant values past llama.cpp's tolerance. Dispatch: (ceil(n_rows/BR), ceil(n/BT)) workgroups; the host
// runs the tiles of matmul-ops.ts GEMM_TILES: the defaults (WG_SIZE 64, GX 8, TT 4: 32 × 32) and WG_SIZE 256, GX 16,
// TT 4 (64 × 64) for large products; other shapes must keep TT ≤ MAX_TT, BR·K4 and BT·K4 multiples of WG_SIZE with
// at most MAX_LD loads each per invocation, and (BR + BT)·9·16 bytes of tiles within the device's workgroup storage.
// test/kernels/webgpu-gemm-banks.test.ts models the shared-memory banks of these index expressions for each tile.
// Reference: as gemv (NMSE).

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
const MAX_LD: u32 = 8u;     // staged groups per invocation and step, for each tile

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
  let tx = lid % GX; // rows tx, tx + GX, tx + 2·GX, tx + 3·GX of the tile
  let ty = lid / GX; // tokens ty·TT … ty·TT+TT−1 of the tile
  var acc: array<vec4<f32>, MAX_TT>; // acc[token][row j]
  var w_next: array<vec4<f32>, MAX_LD>; // the next step's weight groups of this invocation
  var x_next: array<vec4<f32>, MAX_LD>; // the next step's activation groups of this invocation
  load_step(0u, row0, tok0, lid, &w_next, &x_next);
  for (var k0 = 0u; k0 < p.k; k0 += KT) {
    for (var l = 0u; l < BR * K4 / WG_SIZE; l++) { tile_w[tile_index(lid + l * WG_SIZE)] = w_next[l]; }
    for (var l = 0u; l < BT * K4 / WG_SIZE; l++) { tile_x[tile_index(lid + l * WG_SIZE)] = x_next[l]; }
    workgroupBarrier();
    if (k0 + KT < p.k) { load_step(k0 + KT, row0, tok0, lid, &w_next, &x_next); } // overlaps the products below
    for (var k4 = 0u; k4 < K4; k4++) {
      let w0 = tile_w[(tx + 0u * GX) * P4 + k4];
      let w1 = tile_w[(tx + 1u * GX) * P4 + k4];
      let w2 = tile_w[(tx + 2u * GX) * P4 + k4];
      let w3 = tile_w[(tx + 3u * GX) * P4 + k4];
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
      let row = row0 + tx + c * GX;
      if (t < p.n && row < p.n_rows) {
        let col = p.out_offset + row;
        let v = acc[i][c];
        out[t * p.out_stride + col] = select(v, v + bias[col], p.has_bias != 0u);
      }
    }
  }
}

// Tile slot of the idx-th (row or token, group of 4 k) pair an invocation stages: pairs run along k first.
fn tile_index(idx: u32) -> u32 {
  return (idx / K4) * P4 + idx % K4;
}

// Loads the k0 step's groups of 4 k this invocation stages: weights of rows row0 + idx / K4 (dequantized by the quant
// snippet) and activations of tokens tok0 + idx / K4, for idx = lid, lid + WG_SIZE, …; zeros past n_rows, n and k.
fn load_step(
  k0: u32,
  row0: u32,
  tok0: u32,
  lid: u32,
  w_out: ptr<function, array<vec4<f32>, MAX_LD>>,
  x_out: ptr<function, array<vec4<f32>, MAX_LD>>,
) {
  for (var l = 0u; l < BR * K4 / WG_SIZE; l++) {
    let idx = lid + l * WG_SIZE;
    let row = row0 + idx / K4;
    let kk = k0 + (idx % K4) * 4u;
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
    (*w_out)[l] = v;
  }
  for (var l = 0u; l < BT * K4 / WG_SIZE; l++) {
    let idx = lid + l * WG_SIZE;
    let kk = k0 + (idx % K4) * 4u;
    var v = vec4<f32>(0.0);
    if (tok0 + idx / K4 < p.n) {
      let b = p.x_offset + (tok0 + idx / K4) * p.x_stride + kk;
      if (kk + 4u <= p.k) {
        v = vec4<f32>(x[b], x[b + 1u], x[b + 2u], x[b + 3u]);
      } else {
        for (var c = 0u; c < 4u; c++) {
          if (kk + c < p.k) { v[c] = x[b + c]; }
        }
      }
    }
    (*x_out)[l] = v;
  }
}
