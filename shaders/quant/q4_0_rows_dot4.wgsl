// Q4_0 row-split (shaders/quant/q4_0_rows.wgsl) × Q8 activations (shaders/common/x_q8.wgsl): gemv_sg's chunk c of the
// row at `base` (scale origin `so`) as integer dot products — per quant word, its low nibbles (elements 4w … 4w + 3)
// and high nibbles (16 + 4w …) are four int8 each, dotted with x's packed words w and 4 + w by dot4I8Packed;
// Σ(q − 8)·xq = Σ q·xq − 8·Σ xq. Result d_w·d_x·Σ, as llama.cpp's vec_dot_q4_0_q8_0.
fn dot_chunk_q8(base: u32, so: u32, c: u32, xq: Q8Chunk) -> f32 {
  let qb = base + 4u * c;
  let q = vec4<u32>(weights[qb], weights[qb + 1u], weights[qb + 2u], weights[qb + 3u]);
  let lo = q & vec4<u32>(0x0f0f0f0fu);
  let hi = (q >> vec4<u32>(4u)) & vec4<u32>(0x0f0f0f0fu);
  let s = dot4I8Packed(lo.x, xq.q[0]) + dot4I8Packed(lo.y, xq.q[1]) + dot4I8Packed(lo.z, xq.q[2]) +
    dot4I8Packed(lo.w, xq.q[3]) + dot4I8Packed(hi.x, xq.q[4]) + dot4I8Packed(hi.y, xq.q[5]) +
    dot4I8Packed(hi.z, xq.q[6]) + dot4I8Packed(hi.w, xq.q[7]);
  return row_scale(so, c) * xq.d * f32(s - 8 * xq.qsum);
}
