// gemm_sm: out[t, out_offset + r] = Σ_k W[r, k]·x[t, k] (+ bias[r]) — the prefill gemm on subgroup matrices
// (`chromium-experimental-subgroup-matrix`), accumulated in f32. Composed after a reduce_*.wgsl (WG_SIZE), bits.wgsl,
// one quant snippet (load4/load1) and one matrix snippet: shaders/matrix/subgroup.wgsl (the builtins) or
// shaders/matrix/emulated.wgsl (plain-WGSL stand-ins that run anywhere, for tests). The host's prelude defines the
// matrix shape SM_M × SM_N × SM_K of a config the adapter reports, the component type CT (f16 or f32), LANES (the
// largest subgroup size), KT (k per step) and the tile pitches PK, PO.
// Result matrix = weight rows (M) × tokens (N); left = W tile (rows × k, row-major), right = x tile read
// column-major (tokens × k stored, k × tokens read). A workgroup of SG_M·SG_N subgroups of LANES invocations computes
// BR = SG_M·TM·SM_M rows × BT = SG_N·TN·SM_N tokens, each subgroup TM × TN result matrices. Where subgroups are
// narrower than LANES the extra subgroups only stage tiles. K is walked in steps of KT staged in workgroup memory;
// the next step's weights and activations are loaded into registers while the current step's products run.
// Overflow guard (CT = f16): each token's activations are divided by a power of two 2^e (e ≥ 0, from the row's
// largest |x|) so that they stay ≤ 2^14 in f16, and the result is multiplied back: exact scaling, no overflow
// above 65504. Dispatch: (ceil(n_rows / BR), ceil(n / BT)). Reference: as gemm (NMSE).

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

const SG_M: u32 = 2u;              // subgroups along the rows of a tile
const SG_N: u32 = 2u;              // subgroups along the tokens of a tile
const TM: u32 = 2u;                // result matrices per subgroup along rows
const TN: u32 = 2u;                // result matrices per subgroup along tokens
const BR: u32 = SG_M * TM * SM_M;  // rows per tile
const BT: u32 = SG_N * TN * SM_N;  // tokens per tile
const PARTS: u32 = SG_M * SG_N * LANES / BT; // invocations per token in the |x| scan
const WGS: u32 = SG_M * SG_N * LANES;      // invocations per workgroup
const NW: u32 = (BR * (KT / 4u) + WGS - 1u) / WGS; // groups of 4 weights each invocation stages per step
const NX: u32 = (BT * (KT / 4u) + WGS - 1u) / WGS; // groups of 4 activations each invocation stages per step

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> weights: array<u32>;       // (n_rows, row_stride) u32
@group(0) @binding(2) var<storage, read> x: array<f32>;             // (n, x_stride) f32
@group(0) @binding(3) var<storage, read_write> out: array<f32>;     // (n, out_stride) f32
@group(0) @binding(4) var<storage, read> bias: array<f32>;          // (out_stride) f32

var<workgroup> tile_w: array<CT, BR * PK>;     // (BR rows, PK) weights, k along a row
var<workgroup> tile_x: array<CT, BT * PK>;     // (BT tokens, PK) activations ÷ the token's scale, k along a row
var<workgroup> tile_o: array<f32, BT * PO>;    // (BT tokens, PO) results, rows along a token
var<workgroup> amax: array<f32, SG_M * SG_N * LANES>; // (BT, PARTS) partial max |x| per token
var<workgroup> scale: array<f32, BT>;          // (BT) power-of-two divisor of each token's activations

@compute @workgroup_size(SG_M * SG_N * LANES)
fn main(ids: SmIds) {
  let lid = ids.lid;
  let row0 = ids.wg.x * BR;
  let tok0 = ids.wg.y * BT;
  if (GUARD) {
    let t = lid % BT;
    var m = 0.0;
    if (tok0 + t < p.n) {
      let b = p.x_offset + (tok0 + t) * p.x_stride;
      for (var k = lid / BT; k < p.k; k += PARTS) { m = max(m, abs(x[b + k])); }
    }
    amax[lid] = m;
    workgroupBarrier();
    if (lid < BT) {
      var mt = 0.0;
      for (var j = 0u; j < PARTS; j++) { mt = max(mt, amax[j * BT + lid]); }
      var e = 0;
      if (mt > 16384.0) { e = clamp(i32(ceil(log2(mt / 16384.0))), 0, 126); }
      scale[lid] = ldexp(1.0, e);
    }
    workgroupBarrier();
  }
  let sg = sm_group(ids);
  let sm = sg % SG_M;
  let sn = sg / SG_M;
  var acc: array<SmAcc, TM * TN>;
  var w_next: array<vec4<f32>, NW>; // the next step's weights this invocation stages
  var x_next: array<vec4<f32>, NX>; // the next step's activations (÷ scale) this invocation stages
  load_step(0u, row0, tok0, lid, &w_next, &x_next);
  for (var k0 = 0u; k0 < p.k; k0 += KT) {
    store_step(lid, &w_next, &x_next);
    workgroupBarrier();
    if (k0 + KT < p.k) { load_step(k0 + KT, row0, tok0, lid, &w_next, &x_next); } // overlaps the products below
    if (sg < SG_M * SG_N) {
      for (var kk = 0u; kk < KT; kk += SM_K) {
        var left: array<SmLeft, TM>;
        for (var i = 0u; i < TM; i++) { left[i] = sm_load_w(((sm * TM + i) * SM_M) * PK + kk); }
        for (var j = 0u; j < TN; j++) {
          let right = sm_load_x(((sn * TN + j) * SM_N) * PK + kk);
          for (var i = 0u; i < TM; i++) { acc[i * TN + j] = sm_mma(left[i], right, acc[i * TN + j]); }
        }
      }
    }
    workgroupBarrier();
  }
  if (sg < SG_M * SG_N) {
    for (var i = 0u; i < TM; i++) {
      for (var j = 0u; j < TN; j++) {
        sm_store(((sn * TN + j) * SM_N) * PO + (sm * TM + i) * SM_M, acc[i * TN + j], ids);
      }
    }
  }
  workgroupBarrier();
  // Consecutive invocations write consecutive rows of one token.
  for (var idx = lid; idx < BR * BT; idx += WGS) {
    let r = idx % BR;
    let t = idx / BR;
    let row = row0 + r;
    let tok = tok0 + t;
    if (row < p.n_rows && tok < p.n) {
      let col = p.out_offset + row;
      var v = tile_o[t * PO + r];
      if (GUARD) { v *= scale[t]; }
      out[tok * p.out_stride + col] = select(v, v + bias[col], p.has_bias != 0u);
    }
  }
}

// Loads the k0 step's groups of 4 k this invocation stages (idx = lid + l·WGS): weights of rows row0 + idx / (KT/4)
// (dequantized by the quant snippet) and activations of tokens tok0 + idx / (KT/4) (÷ the token's scale); zeros
// past n_rows, n and k.
fn load_step(
  k0: u32,
  row0: u32,
  tok0: u32,
  lid: u32,
  w_out: ptr<function, array<vec4<f32>, NW>>,
  x_out: ptr<function, array<vec4<f32>, NX>>,
) {
  for (var l = 0u; l < NW; l++) {
    let idx = lid + l * WGS;
    let r = idx / (KT / 4u);
    let kk = k0 + (idx % (KT / 4u)) * 4u;
    var v = vec4<f32>(0.0);
    if (r < BR && row0 + r < p.n_rows) {
      let base = (row0 + r) * p.row_stride;
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
  for (var l = 0u; l < NX; l++) {
    let idx = lid + l * WGS;
    let t = idx / (KT / 4u);
    let kk = k0 + (idx % (KT / 4u)) * 4u;
    var v = vec4<f32>(0.0);
    if (t < BT && tok0 + t < p.n) {
      let b = p.x_offset + (tok0 + t) * p.x_stride + kk;
      for (var c = 0u; c < 4u; c++) {
        if (kk + c < p.k) { v[c] = x[b + c]; }
      }
      if (GUARD) { v /= scale[t]; }
    }
    (*x_out)[l] = v;
  }
}

// Writes the loaded groups into the tiles as CT.
fn store_step(lid: u32, w_in: ptr<function, array<vec4<f32>, NW>>, x_in: ptr<function, array<vec4<f32>, NX>>) {
  for (var l = 0u; l < NW; l++) {
    let idx = lid + l * WGS;
    if (idx < BR * (KT / 4u)) {
      let at = (idx / (KT / 4u)) * PK + (idx % (KT / 4u)) * 4u;
      for (var c = 0u; c < 4u; c++) { tile_w[at + c] = CT((*w_in)[l][c]); }
    }
  }
  for (var l = 0u; l < NX; l++) {
    let idx = lid + l * WGS;
    if (idx < BT * (KT / 4u)) {
      let at = (idx / (KT / 4u)) * PK + (idx % (KT / 4u)) * 4u;
      for (var c = 0u; c < 4u; c++) { tile_x[at + c] = CT((*x_in)[l][c]); }
    }
  }
}
