// Q5_1 (ggml block_q5_1, 32 elements; GGUF layout is word aligned). Block, 6 words: [0] f16 d (low), f16 m (high),
// [1] qh (bit e = 5th bit of element e), [2..5] qs[16] (low nibbles as Q4_0). value = q·d + m.
fn load4(base: u32, i: u32) -> vec4<f32> {
  let bw = base + (i >> 5u) * 6u;
  let r = i & 31u;
  let dm = unpack2x16float(weights[bw]);
  let lo = nib4(weights[bw + 2u + ((r & 15u) >> 2u)], select(0u, 4u, r >= 16u));
  let hi = vec4<f32>((vec4<u32>(weights[bw + 1u]) >> vec4<u32>(r, r + 1u, r + 2u, r + 3u)) & vec4<u32>(1u)) * 16.0;
  return (lo + hi) * dm.x + dm.y;
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
