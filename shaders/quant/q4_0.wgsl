// Q4_0 (ggml block_q4_0, 32 elements). Repacked block, 5 words: [0..3] qs[16] (byte j: element j low nibble,
// element j+16 high nibble), [4] low half = f16 d. value = (q − 8)·d.
fn load4(base: u32, i: u32) -> vec4<f32> {
  let bw = base + (i >> 5u) * 5u;
  let r = i & 31u;
  let d = f16_lo(weights[bw + 4u]);
  let q = nib4(weights[bw + ((r & 15u) >> 2u)], select(0u, 4u, r >= 16u));
  return (q - 8.0) * d;
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
