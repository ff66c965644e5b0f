// Q8_0 row-split (shaders/quant/q8_0_rows.wgsl) × Q8 activations (shaders/common/x_q8.wgsl): gemv_sg's chunk c of the
// row at `base` (scale origin `so`) as eight dot4I8Packed of the block's int8 words with x's. Result d_w·d_x·Σ q·xq,
// as llama.cpp's vec_dot_q8_0_q8_0.
fn dot_chunk_q8(base: u32, so: u32, c: u32, xq: Q8Chunk) -> f32 {
  let qb = base + 8u * c;
  let s = dot4I8Packed(weights[qb], xq.q[0]) + dot4I8Packed(weights[qb + 1u], xq.q[1]) +
    dot4I8Packed(weights[qb + 2u], xq.q[2]) + dot4I8Packed(weights[qb + 3u], xq.q[3]) +
    dot4I8Packed(weights[qb + 4u], xq.q[4]) + dot4I8Packed(weights[qb + 5u], xq.q[5]) +
    dot4I8Packed(weights[qb + 6u], xq.q[6]) + dot4I8Packed(weights[qb + 7u], xq.q[7]);
  return row_scale(so, c) * xq.d * f32(s);
}
