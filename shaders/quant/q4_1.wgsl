// Q4_1 (ggml block_q4_1, 32 elements; GGUF layout is already word aligned). Block, 5 words: [0] f16 d (low) and
// f16 m (high), [1..4] qs[16] (byte j: element j low nibble, j+16 high). value = q·d + m.
fn load4(base: u32, i: u32) -> vec4<f32> {
  let bw = base + (i >> 5u) * 5u;
  let r = i & 31u;
  let dm = unpack2x16float(weights[bw]);
  return nib4(weights[bw + 1u + ((r & 15u) >> 2u)], select(0u, 4u, r >= 16u)) * dm.x + dm.y;
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
