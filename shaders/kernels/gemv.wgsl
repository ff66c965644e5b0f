// gemv: the hardware decode GEMV without subgroups (Firefox, Safari, adapters without `subgroups`), with the same
// fusions, Params and bindings as gemv_sg.wgsl (see there), so the host records both alike:
//   y[r] = Σ_k W[r, k]·x'[k] (x' = rmsNorm(x)·norm_w with HAS_NORM), + bias (has_bias), IS_GLU: act(gate)·up,
//   out = y or out += y (ACCUMULATE); rows ≥ split1 / split2 go to out1 / out2 (Q|K|V in one dispatch).
// Work split: a workgroup covers ROWS rows in ROWS / R row groups of R rows; each row group gets TPG = WG_SIZE·R / ROWS
// invocations that split its K (split-K: the host picks more invocations per row group for long rows and for
// matmuls with few rows, src/backend/webgpu/gemv-shape.ts). Invocation j of a row group walks K in 32-element chunks
// j, j + TPG, …: it loads the chunk's x' once (eight vec4 kept in registers, Σx² on the side for the norm) and dots
// it with its R rows through the quant snippet's dot_chunk (a block's words loaded as one contiguous span, its scale
// decoded once) — the inner loop gemv_sg runs per subgroup lane. Partial sums meet in workgroup memory: one barrier,
// a first pass summing 8 partials per slot where a row group has more than 8 invocations, a second barrier, and one
// invocation per row adds the rest and stores. Two barriers per ROWS rows at most (the tree reduction this replaces
// spent 8 per row and reduction: up to 24 per row with the norm and the GLU's up row).
// Composed after reduce_shared.wgsl (Ids, WG_SIZE), bits.wgsl, one quant snippet (load4/load1, dot_chunk, or
// common/dot_chunk.wgsl after it) and common/gemv_io.wgsl (overrides but ROWS/K/R, Params, bindings, x1, act, store).
// Dispatch: (gx, gy, n) workgroups, rows (wg.y·gx + wg.x)·ROWS …, token t = wg.z. f32 accumulation.
// Reference: x·Wᵀ with W dequantized by src/quant (CpuOps.matmul), NMSE; fusions: webgpu-hardware-fused test.

override ROWS: u32 = 8u; // rows per workgroup: a multiple of R, ROWS / R dividing WG_SIZE
override K: u32 = 0u; // row length fixed at pipeline creation (constant loop bounds); 0: p.k
const MAX_R: u32 = 4u; // register arrays of a row group
override R: u32 = 4u; // rows dotted with each chunk of x' (≤ MAX_R; 1 for types without a fast dot_chunk)
const STEP: u32 = 8u; // partials one first-pass invocation sums

// Partial sums (slot, invocation of its row group), ROWS·TPG = R·WG_SIZE per kind: slots [0, ROWS) the rows (IS_GLU:
// gate), [ROWS, 2·ROWS) the up rows (IS_GLU), 2·ROWS Σx² (HAS_NORM, from row group 0, which covers all of K).
var<workgroup> part: array<f32, (2u * R + 1u) * WG_SIZE>;
// First-pass sums (slot, q), q < TPG / STEP: used when a row group has more than STEP invocations.
var<workgroup> part2: array<f32, (2u * R + 1u) * WG_SIZE / STEP + 1u>;
var<private> x_ss: vec4<f32>; // Σx² of the chunks this invocation loaded (HAS_NORM)

/** x' of elements i … i + 3 (x·norm_w with HAS_NORM, adding x² to x_ss). */
fn xw4(xb: u32, i: u32) -> vec4<f32> {
  let v = vec4<f32>(x[xb + i], x[xb + i + 1u], x[xb + i + 2u], x[xb + i + 3u]);
  if (HAS_NORM) {
    x_ss += v * v;
    return v * vec4<f32>(norm_w[i], norm_w[i + 1u], norm_w[i + 2u], norm_w[i + 3u]);
  }
  return v;
}

/** x' of the 32 elements of chunk c (unrolled: constant indices keep the array in registers). */
fn x_chunk(xb: u32, c: u32) -> array<vec4<f32>, 8> {
  let i = c * 32u;
  return array<vec4<f32>, 8>(xw4(xb, i), xw4(xb, i + 4u), xw4(xb, i + 8u), xw4(xb, i + 12u), xw4(xb, i + 16u),
    xw4(xb, i + 20u), xw4(xb, i + 24u), xw4(xb, i + 28u));
}

/** Σ of slot s's partials (after the barriers): TPG of them in `part`, or nq first-pass sums in `part2`. */
fn slot_sum(s: u32, tpg: u32, nq: u32) -> f32 {
  var sum = 0.0;
  if (nq > 1u) {
    for (var q = 0u; q < nq; q++) { sum += part2[s * nq + q]; }
  } else {
    for (var j = 0u; j < tpg; j++) { sum += part[s * tpg + j]; }
  }
  return sum;
}

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  let k = select(p.k, K, K != 0u);
  let tpg = WG_SIZE / (ROWS / R); // invocations per row group
  let g = ids.lid / tpg;
  let j = ids.lid % tpg;
  let row0 = (ids.wg.y * ids.nwg.x + ids.wg.x) * ROWS;
  let t = ids.wg.z;
  let xb = p.x_offset + t * p.x_stride;
  let first = row0 + g * R;
  let nr = select(0u, min(R, p.n_rows - first), first < p.n_rows); // rows of this group that exist
  var acc = array<f32, MAX_R>();
  var up = array<f32, MAX_R>();
  x_ss = vec4<f32>();
  var ss_tail = 0.0;
  if (nr > 0u) {
    var bases: array<u32, MAX_R>;
    var ubases: array<u32, MAX_R>;
    var scales: array<u32, MAX_R>; // the rows' scale origins (row-split layouts: scales in their own region)
    var uscales: array<u32, MAX_R>;
    for (var r = 0u; r < R; r++) {
      bases[r] = row_base(first + r);
      ubases[r] = p.w_base1 + (first + r) * p.row_stride;
      scales[r] = scale_origin(bases[r]);
      if (IS_GLU) { uscales[r] = scale_origin(ubases[r]); }
    }
    let nc = k / 32u; // whole chunks; the rest (float types only) element by element
    for (var c = j; c < nc; c += tpg) {
      let xv = x_chunk(xb, c);
      let s4 = xv[0] + xv[1] + xv[2] + xv[3] + xv[4] + xv[5] + xv[6] + xv[7];
      let xsum = s4.x + s4.y + s4.z + s4.w;
      for (var r = 0u; r < R; r++) {
        if (r < nr) {
          acc[r] += dot_chunk(bases[r], scales[r], c, xv, xsum);
          if (IS_GLU) { up[r] += dot_chunk(ubases[r], uscales[r], c, xv, xsum); }
        }
      }
    }
    for (var i = nc * 32u + j; i < k; i += tpg) {
      let xi = x1(xb, i);
      if (HAS_NORM) { ss_tail += x[xb + i] * x[xb + i]; }
      for (var r = 0u; r < R; r++) {
        if (r < nr) {
          acc[r] += load1(bases[r], i) * xi;
          if (IS_GLU) { up[r] += load1(ubases[r], i) * xi; }
        }
      }
    }
  }
  for (var r = 0u; r < R; r++) {
    part[(g * R + r) * tpg + j] = acc[r];
    if (IS_GLU) { part[(ROWS + g * R + r) * tpg + j] = up[r]; }
  }
  if (HAS_NORM && g == 0u) { part[2u * ROWS * tpg + j] = x_ss.x + x_ss.y + x_ss.z + x_ss.w + ss_tail; }
  workgroupBarrier();
  // First pass (row groups of more than STEP invocations): invocation i sums STEP partials of one slot, strided so
  // that neighbouring invocations read neighbouring words.
  let nq = max(1u, tpg / STEP);
  if (nq > 1u) {
    for (var i = ids.lid; i < (2u * ROWS + 1u) * nq; i += WG_SIZE) {
      let s = i / nq;
      let used = s < ROWS || (IS_GLU && s < 2u * ROWS) || (HAS_NORM && s == 2u * ROWS);
      if (used) {
        var sum = 0.0;
        for (var q = 0u; q < STEP; q++) { sum += part[s * tpg + i % nq + q * nq]; }
        part2[i] = sum;
      }
    }
    workgroupBarrier();
  }
  for (var r = ids.lid; r < ROWS; r += WG_SIZE) {
    let row = row0 + r;
    if (row < p.n_rows) {
      var f = 1.0;
      if (HAS_NORM) { f = 1.0 / sqrt(slot_sum(2u * ROWS, tpg, nq) / f32(k) + p.eps); }
      var y = slot_sum(r, tpg, nq) * f;
      if (IS_GLU) { y = act(y) * (slot_sum(ROWS + r, tpg, nq) * f); }
      if (p.has_bias != 0u) { y += bias[p.out_offset + row]; }
      store(t, row, y);
    }
  }
}
