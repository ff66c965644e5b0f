// Q5_0 (ggml block_q5_0, 32 elements), row-split layout of the hardware kernels: exactly the GGUF's bytes, reordered
// in two regions per binding (src/backend/webgpu/upload.ts GpuQuantLayout.rowSplit) — the rows' block bodies, row r
// at word base = 5·nb·r (16-byte aligned when nb is a multiple of 4), block b at words base + 5b…: [0] qh (bit e =
// 5th bit of element e), [1..4] qs[16] as Q4_0; nb = p.k / 32; then the f16 d of every block, reversed and
// right-justified at the end of the binding's span (weight_span): block b of the row at `base` is half
// scale_origin(base) − b. value = (q − 16)·d.
/** Half index of block 0's scale of the row at word `base` (block b: this − b). */
fn scale_origin(base: u32) -> u32 {
  let s = weight_span(base);
  return 2u * s.y - 1u - (base - s.x) / 5u;
}
/** The f16 scale of block b of the row whose scale origin is `so`. */
fn row_scale(so: u32, b: u32) -> f32 {
  let h = so - b;
  return unpack2x16float(weights[h >> 1u])[h & 1u];
}
fn load4(base: u32, i: u32) -> vec4<f32> {
  let b = i >> 5u;
  let bw = base + b * 5u;
  let r = i & 31u;
  let d = row_scale(scale_origin(base), b);
  let lo = nib4(weights[bw + 1u + ((r & 15u) >> 2u)], select(0u, 4u, r >= 16u));
  let hi = vec4<f32>((vec4<u32>(weights[bw]) >> vec4<u32>(r, r + 1u, r + 2u, r + 3u)) & vec4<u32>(1u)) * 16.0;
  return (lo + hi - 16.0) * d;
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
/** The 5th bits (×16) of elements s … s + 3 from the block's qh word. */
fn q5_0_hi(qh: u32, s: u32) -> vec4<f32> {
  return vec4<f32>((vec4<u32>(qh) >> vec4<u32>(s, s + 1u, s + 2u, s + 3u)) & vec4<u32>(1u)) * 16.0;
}
/** Σ q·x' of quant word w of a block (elements 4w… low nibbles, 16 + 4w… high), 5th bits from qh. */
fn q5_0_word(q: u32, qh: u32, w: u32, lo: vec4<f32>, hi: vec4<f32>) -> f32 {
  return dot(nib4(q, 0u) + q5_0_hi(qh, 4u * w), lo) + dot(nib4(q, 4u) + q5_0_hi(qh, 16u + 4u * w), hi);
}
/** gemv_sg's chunk c = block c dotted with xv: its 5 words loaded once, its scale once; d·(Σq·x − 16·Σx). */
fn dot_chunk(base: u32, so: u32, c: u32, xv: array<vec4<f32>, 8>, xsum: f32) -> f32 {
  let bw = base + 5u * c;
  let qh = weights[bw];
  let q = vec4<u32>(weights[bw + 1u], weights[bw + 2u], weights[bw + 3u], weights[bw + 4u]);
  let d = row_scale(so, c);
  let s = q5_0_word(q.x, qh, 0u, xv[0], xv[4]) + q5_0_word(q.y, qh, 1u, xv[1], xv[5]) +
    q5_0_word(q.z, qh, 2u, xv[2], xv[6]) + q5_0_word(q.w, qh, 3u, xv[3], xv[7]);
  return d * (s - 16.0 * xsum);
}
