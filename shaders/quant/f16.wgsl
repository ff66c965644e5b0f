// F16 weights. Row layout: ceil(K/2) words, element i = half (i & 1) of word i/2 (rows padded to even length).
fn load4(base: u32, i: u32) -> vec4<f32> {
  let w = base + (i >> 1u);
  return vec4<f32>(unpack2x16float(weights[w]), unpack2x16float(weights[w + 1u]));
}
fn load1(base: u32, i: u32) -> f32 {
  let v = unpack2x16float(weights[base + (i >> 1u)]);
  return select(v.x, v.y, (i & 1u) == 1u);
}
