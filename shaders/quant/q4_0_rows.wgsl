// Q4_0 (ggml block_q4_0, 32 elements), row-split layout of the hardware kernels: exactly the GGUF's bytes, reordered
// in two regions per binding (src/backend/webgpu/upload.ts GpuQuantLayout.rowSplit) — the rows' block bodies, row r
// at word base = 4·nb·r (block b: qs[16] at words base + 4b…4b+3, 16-byte aligned; byte t: element t low nibble,
// element t+16 high nibble), nb = p.k / 32; then the f16 d of every block, reversed and right-justified at the end
// of the binding's span (weight_span): block b of the row at `base` is half scale_origin(base) − b. value = (q − 8)·d.
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
  let q = nib4(weights[base + 4u * b + ((r & 15u) >> 2u)], select(0u, 4u, r >= 16u));
  return (q - 8.0) * d;
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
/** Σ nibbles·x' of one quant word w (elements 4w… low nibbles, 16 + 4w… high) of a block. */
fn q4_0_word(q: u32, lo: vec4<f32>, hi: vec4<f32>) -> f32 { return dot(nib4(q, 0u), lo) + dot(nib4(q, 4u), hi); }
/**
 * gemv_sg's chunk c = block c of the row at `base` (scale origin `so`) dotted with xv (x' of its 32 elements, xsum
 * their sum): the block's 16 quant bytes loaded once as one aligned 4-word span, its scale decoded once;
 * Σ(q − 8)·d·x = d·(Σq·x − 8·Σx).
 */
fn dot_chunk(base: u32, so: u32, c: u32, xv: array<vec4<f32>, 8>, xsum: f32) -> f32 {
  let qb = base + 4u * c;
  let q = vec4<u32>(weights[qb], weights[qb + 1u], weights[qb + 2u], weights[qb + 3u]);
  let d = row_scale(so, c);
  let s = q4_0_word(q.x, xv[0], xv[4]) + q4_0_word(q.y, xv[1], xv[5]) + q4_0_word(q.z, xv[2], xv[6]) +
    q4_0_word(q.w, xv[3], xv[7]);
  return d * (s - 8.0 * xsum);
}
