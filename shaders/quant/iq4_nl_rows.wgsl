// IQ4_NL (ggml block_iq4_nl, 32 elements), row-split layout of the hardware kernels: exactly the GGUF's bytes,
// reordered in two regions per binding (src/backend/webgpu/upload.ts GpuQuantLayout.rowSplit) — the rows' block
// bodies, row r at word base = 4·nb·r (block b: qs[16] nibble indices at words base + 4b…, as Q4_0), nb = p.k / 32;
// then the f16 d of every block, reversed and right-justified at the end of the binding's span (weight_span): block
// b of the row at `base` is half scale_origin(base) − b. value = d · kvalues_iq4nl[q] (ggml-common.h's codebook).
const KVALUES_IQ4NL = array<f32, 16>(-127.0, -104.0, -83.0, -65.0, -49.0, -35.0, -22.0, -10.0,
                                      1.0, 13.0, 25.0, 38.0, 53.0, 69.0, 89.0, 113.0);
fn iq4_lookup(q: vec4<u32>) -> vec4<f32> {
  return vec4<f32>(KVALUES_IQ4NL[q.x], KVALUES_IQ4NL[q.y], KVALUES_IQ4NL[q.z], KVALUES_IQ4NL[q.w]);
}
/** Half index of block 0's scale of the row at word `base` (block b: this − b). */
fn scale_origin(base: u32) -> u32 {
  let s = weight_span(base);
  return 2u * s.y - 1u - (base - s.x) / 4u;
}
/** The f16 scale of block b of the row whose scale origin is `so`. */
fn row_scale(so: u32, b: u32) -> f32 {
  let h = so - b;
  return unpack2x16float(weights[h >> 1u])[h & 1u];
}
fn load4(base: u32, i: u32) -> vec4<f32> {
  let b = i >> 5u;
  let r = i & 31u;
  let d = row_scale(scale_origin(base), b);
  return iq4_lookup(bits4(weights[base + 4u * b + ((r & 15u) >> 2u)], select(0u, 4u, r >= 16u), 0xfu)) * d;
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
/** Σ codebook(q)·x' of quant word w of a block (elements 4w… low nibbles, 16 + 4w… high). */
fn iq4_nl_word(q: u32, lo: vec4<f32>, hi: vec4<f32>) -> f32 {
  return dot(iq4_lookup(bits4(q, 0u, 0xfu)), lo) + dot(iq4_lookup(bits4(q, 4u, 0xfu)), hi);
}
/** gemv_sg's chunk c = block c dotted with xv: its 4 quant words loaded once, its scale once. */
fn dot_chunk(base: u32, so: u32, c: u32, xv: array<vec4<f32>, 8>, xsum: f32) -> f32 {
  let qb = base + 4u * c;
  let q = vec4<u32>(weights[qb], weights[qb + 1u], weights[qb + 2u], weights[qb + 3u]);
  let d = row_scale(so, c);
  return d * (iq4_nl_word(q.x, xv[0], xv[4]) + iq4_nl_word(q.y, xv[1], xv[5]) + iq4_nl_word(q.z, xv[2], xv[6]) +
    iq4_nl_word(q.w, xv[3], xv[7]));
}
