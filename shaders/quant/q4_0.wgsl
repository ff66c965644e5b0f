// Q4_0 (ggml block_q4_0, 32 elements), grouped: 4 blocks per 20-word (16-byte aligned) group — [0..15] the blocks'
// qs[16] in order (block j at words 4j…4j+3; byte t: element t low nibble, element t+16 high nibble), [16..17] the
// four f16 d (block j: half j&1 of word 16 + j/2), [18..19] zero. value = (q − 8)·d.
fn load4(base: u32, i: u32) -> vec4<f32> {
  let b = i >> 5u;
  let gw = base + (b >> 2u) * 20u;
  let j = b & 3u;
  let r = i & 31u;
  let d = unpack2x16float(weights[gw + 16u + (j >> 1u)])[j & 1u];
  let q = nib4(weights[gw + 4u * j + ((r & 15u) >> 2u)], select(0u, 4u, r >= 16u));
  return (q - 8.0) * d;
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
