// Q8_0 (ggml block_q8_0, 32 elements). Repacked block, 9 words: [0..7] qs[32] int8 (element e = byte e),
// [8] low half = f16 d. value = q·d.
fn load4(base: u32, i: u32) -> vec4<f32> {
  let bw = base + (i >> 5u) * 9u;
  let d = f16_lo(weights[bw + 8u]);
  return i8x4(weights[bw + ((i & 31u) >> 2u)]) * d;
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
