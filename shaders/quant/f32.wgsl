// F32 weights. Row layout: K words, element i = word i. Hooks used by gemv/gemm/embed: load4 (i % 4 == 0) and load1.
fn load4(base: u32, i: u32) -> vec4<f32> {
  let w = base + i;
  return bitcast<vec4<f32>>(vec4<u32>(weights[w], weights[w + 1u], weights[w + 2u], weights[w + 3u]));
}
fn load1(base: u32, i: u32) -> f32 { return bitcast<f32>(weights[base + i]); }
