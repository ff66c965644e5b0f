// BF16 weights. Row layout as F16: ceil(K/2) words, element i = half (i & 1) of word i/2; a bf16 is the high
// 16 bits of an f32, so widening is a shift.
fn bf16_pair(w: u32) -> vec2<f32> { return vec2<f32>(bitcast<f32>(w << 16u), bitcast<f32>(w & 0xffff0000u)); }
fn load4(base: u32, i: u32) -> vec4<f32> {
  let w = base + (i >> 1u);
  return vec4<f32>(bf16_pair(weights[w]), bf16_pair(weights[w + 1u]));
}
fn load1(base: u32, i: u32) -> f32 {
  let v = bf16_pair(weights[base + (i >> 1u)]);
  return select(v.x, v.y, (i & 1u) == 1u);
}
