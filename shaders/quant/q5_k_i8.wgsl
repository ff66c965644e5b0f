// Q5_K for the software kernel set, re-coded at upload (block-recode.ts, recodeQ5kI8): a 72-word block (16-byte
// aligned in every row: a row is 72·K/256 words) holding [0..63] the 256 5-bit quants q as bytes (element e at byte
// e, so word w is elements 4w … 4w+3), [64..65] the 8 sub-block scales and [66..67] the 8 mins as bytes (sub-block
// j = elements 32j … 32j+31 at byte j), [68] f16 d, f16 dmin, [69..71] zero. value = (d·sc)·q − dmin·m, as the
// GGUF block's. Why: as q6_k_i8.wgsl, one word per four quants instead of a nibble and a high bit to join.
fn load4(base: u32, i: u32) -> vec4<f32> {
  let bw = base + (i >> 8u) * 72u;
  let e = i & 255u;
  let j = e >> 5u;
  let dm = unpack2x16float(weights[bw + 68u]);
  let sh = 8u * (j & 3u);
  let sc = f32((weights[bw + 64u + (j >> 2u)] >> sh) & 0xffu);
  let mn = f32((weights[bw + 66u + (j >> 2u)] >> sh) & 0xffu);
  return (dm.x * sc) * i8x4(weights[bw + (e >> 2u)]) - dm.y * mn;
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
