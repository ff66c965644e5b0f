// Q5_0 (ggml block_q5_0, 32 elements). Repacked block, 6 words: [0] qh (bit e = 5th bit of element e),
// [1..4] qs[16] (low nibbles as Q4_0), [5] low half = f16 d. value = (q − 16)·d.
fn load4(base: u32, i: u32) -> vec4<f32> {
  let bw = base + (i >> 5u) * 6u;
  let r = i & 31u;
  let d = f16_lo(weights[bw + 5u]);
  let lo = nib4(weights[bw + 1u + ((r & 15u) >> 2u)], select(0u, 4u, r >= 16u));
  let hi = vec4<f32>((vec4<u32>(weights[bw]) >> vec4<u32>(r, r + 1u, r + 2u, r + 3u)) & vec4<u32>(1u)) * 16.0;
  return (lo + hi - 16.0) * d;
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
