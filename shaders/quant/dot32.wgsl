// Generic dot32 over any quant snippet's load4: Σ over elements 32b … 32b+31 of the row at `base` of value·x,
// x given as eight vec4 (x0 = elements 0–3 … x7 = 28–31); `sx` unused. Types with a faster block form have their
// own <type>_dot32.wgsl.
fn dot32(base: u32, b: u32, x0: vec4<f32>, x1: vec4<f32>, x2: vec4<f32>, x3: vec4<f32>, x4: vec4<f32>, x5: vec4<f32>, x6: vec4<f32>, x7: vec4<f32>, sx: f32) -> f32 {
  let i = b * 32u;
  return dot(load4(base, i), x0) + dot(load4(base, i + 4u), x1) + dot(load4(base, i + 8u), x2) + dot(load4(base, i + 12u), x3)
       + dot(load4(base, i + 16u), x4) + dot(load4(base, i + 20u), x5) + dot(load4(base, i + 24u), x6) + dot(load4(base, i + 28u), x7);
}
