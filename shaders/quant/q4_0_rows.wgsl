// Q4_0 (ggml block_q4_0, 32 elements), row-split layout of the hardware kernels: exactly the GGUF's bytes per row,
// reordered — [0 .. 4·nb) the blocks' qs[16] in order (block b at words 4b…4b+3; byte t: element t low nibble,
// element t+16 high nibble), then the nb f16 d (block b: half b&1 of word 4·nb + b/2), nb = p.k / 32. Rows are
// whole words (+2 bytes for an odd nb). value = (q − 8)·d. Reads p.k: every weight-reading kernel has it.
fn load4(base: u32, i: u32) -> vec4<f32> {
  let b = i >> 5u;
  let r = i & 31u;
  let d = unpack2x16float(weights[base + (p.k >> 5u) * 4u + (b >> 1u)])[b & 1u];
  let q = nib4(weights[base + 4u * b + ((r & 15u) >> 2u)], select(0u, 4u, r >= 16u));
  return (q - 8.0) * d;
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
/** Σ nibbles·x' of one quant word w (elements 4w… low nibbles, 16 + 4w… high) of a block. */
fn q4_0_word(q: u32, lo: vec4<f32>, hi: vec4<f32>) -> f32 { return dot(nib4(q, 0u), lo) + dot(nib4(q, 4u), hi); }
/**
 * gemv_sg's chunk c = block c of the row at `base` dotted with xv (x' of its 32 elements, xsum their sum): the
 * block's 16 quant bytes loaded once as one aligned 4-word span, its scale decoded once; Σ(q − 8)·d·x = d·(Σq·x − 8·Σx).
 */
fn dot_chunk(base: u32, c: u32, xv: array<vec4<f32>, 8>, xsum: f32) -> f32 {
  let qb = base + 4u * c;
  let q = vec4<u32>(weights[qb], weights[qb + 1u], weights[qb + 2u], weights[qb + 3u]);
  let d = unpack2x16float(weights[base + (p.k >> 5u) * 4u + (c >> 1u)])[c & 1u];
  let s = q4_0_word(q.x, xv[0], xv[4]) + q4_0_word(q.y, xv[1], xv[5]) + q4_0_word(q.z, xv[2], xv[6]) +
    q4_0_word(q.w, xv[3], xv[7]);
  return d * (s - 8.0 * xsum);
}
