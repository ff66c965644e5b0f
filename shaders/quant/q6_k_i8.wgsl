// Q6_K for the software kernel set, re-coded at upload (upload.ts, recodeQ6kI8): a 72-word block (16-byte aligned
// in every row: a row is 72·K/256 words) holding [0..63] the 256 quants as int8 q − 32 (element e at byte e, so
// word w is elements 4w … 4w+3), [64..67] the 16 int8 sub-block scales (sub-block j = elements 16j … 16j+15 at
// byte j), [68] low half = f16 d, [69..71] zero. value = (d·scale)·(q − 32), as the GGUF block's. Why: lavapipe
// runs a lane's loads and bit operations as scalar work, and the 53-word GGUF block costs two words (a 4-bit and
// a 2-bit field to shift, mask and join) per four quants; here it is one word and one sign extension.
fn load4(base: u32, i: u32) -> vec4<f32> {
  let bw = base + (i >> 8u) * 72u;
  let e = i & 255u;
  let sw = weights[bw + 64u + (e >> 6u)];
  let sc = f32(bitcast<i32>(sw << (24u - 8u * ((e >> 4u) & 3u))) >> 24u);
  return (f16_lo(weights[bw + 68u]) * sc) * i8x4(weights[bw + (e >> 2u)]);
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
