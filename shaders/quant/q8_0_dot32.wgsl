// dot32 for Q8_0 (grouped layout of q8_0.wgsl): Σ over the 32 elements of block `b` of the row at word `base` of
// q·d·x, x as eight vec4 (x0 = elements 0–3 … x7 = 28–31); `sx` unused. The block's quants are two vec4<u32>
// loads (`weights4`, the same buffer as `weights`).
fn dot32(base: u32, b: u32, x0: vec4<f32>, x1: vec4<f32>, x2: vec4<f32>, x3: vec4<f32>, x4: vec4<f32>, x5: vec4<f32>, x6: vec4<f32>, x7: vec4<f32>, sx: f32) -> f32 {
  let g4 = (base >> 2u) + (b >> 2u) * 9u; // the group, in vec4 units
  let j = b & 3u;
  let qa = weights4[g4 + 2u * j];
  let qb = weights4[g4 + 2u * j + 1u];
  let d = unpack2x16float(weights[(g4 + 8u) * 4u + (j >> 1u)])[j & 1u];
  let s = dot(i8x4(qa.x), x0) + dot(i8x4(qa.y), x1) + dot(i8x4(qa.z), x2) + dot(i8x4(qa.w), x3)
        + dot(i8x4(qb.x), x4) + dot(i8x4(qb.y), x5) + dot(i8x4(qb.z), x6) + dot(i8x4(qb.w), x7);
  return d * s;
}
