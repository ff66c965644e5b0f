// Q8_0 (ggml block_q8_0, 32 elements), grouped: 4 blocks per 36-word (16-byte aligned) group — [0..31] the blocks'
// qs[32] int8 in order (block j at words 8j…8j+7, element e = byte e), [32..33] the four f16 d (block j: half j&1
// of word 32 + j/2), [34..35] zero. value = q·d.
fn load4(base: u32, i: u32) -> vec4<f32> {
  let b = i >> 5u;
  let gw = base + (b >> 2u) * 36u;
  let j = b & 3u;
  let d = unpack2x16float(weights[gw + 32u + (j >> 1u)])[j & 1u];
  return i8x4(weights[gw + 8u * j + ((i & 31u) >> 2u)]) * d;
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
