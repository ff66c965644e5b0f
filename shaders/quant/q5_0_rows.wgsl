// Q5_0 (ggml block_q5_0, 32 elements), row-split layout of the hardware kernels: exactly the GGUF's bytes per row,
// reordered — [0 .. 5·nb) block bodies of 5 words ([0] qh: bit e = 5th bit of element e, [1..4] qs[16] as Q4_0),
// then the nb f16 d (block b: half b&1 of word 5·nb + b/2), nb = p.k / 32. value = (q − 16)·d. Reads p.k.
fn load4(base: u32, i: u32) -> vec4<f32> {
  let b = i >> 5u;
  let bw = base + b * 5u;
  let r = i & 31u;
  let d = unpack2x16float(weights[base + (p.k >> 5u) * 5u + (b >> 1u)])[b & 1u];
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
fn dot_chunk(base: u32, c: u32, xv: array<vec4<f32>, 8>, xsum: f32) -> f32 {
  let bw = base + 5u * c;
  let qh = weights[bw];
  let q = vec4<u32>(weights[bw + 1u], weights[bw + 2u], weights[bw + 3u], weights[bw + 4u]);
  let d = unpack2x16float(weights[base + (p.k >> 5u) * 5u + (c >> 1u)])[c & 1u];
  let s = q5_0_word(q.x, qh, 0u, xv[0], xv[4]) + q5_0_word(q.y, qh, 1u, xv[1], xv[5]) +
    q5_0_word(q.z, qh, 2u, xv[2], xv[6]) + q5_0_word(q.w, qh, 3u, xv[3], xv[7]);
  return d * (s - 16.0 * xsum);
}
