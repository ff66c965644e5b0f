// dot32 for Q6_K re-coded to int8 (q6_k_i8.wgsl's 72-word block): Σ over elements 32b … 32b+31 of the row at word
// `base` of value·x, x as eight vec4 (x0 = elements 0–3 … x7 = 28–31); `sx` unused. Those 32 elements are words
// 8s … 8s+7 of block b / 8 (s = b & 7): two vec4 loads, the block being 16-byte aligned; elements 0–15 take the
// int8 scale at byte 2s of scale words 64…, 16–31 the next one. Reads only `weights[…]` / `weights4[…]`, so
// gemv_bcast's renamed copy reads `up_w`.
fn dot32(base: u32, b: u32, x0: vec4<f32>, x1: vec4<f32>, x2: vec4<f32>, x3: vec4<f32>, x4: vec4<f32>, x5: vec4<f32>, x6: vec4<f32>, x7: vec4<f32>, sx: f32) -> f32 {
  let bw = base + (b >> 3u) * 72u;
  let s = b & 7u;
  let q4 = (bw >> 2u) + 2u * s;
  let qa = weights4[q4];
  let qb = weights4[q4 + 1u];
  let sw = weights[bw + 64u + (s >> 1u)] >> (16u * (s & 1u)); // the two int8 scales, low bytes
  let sa = f32(bitcast<i32>(sw << 24u) >> 24u);
  let sb = f32(bitcast<i32>(sw << 16u) >> 24u);
  let a = dot(i8x4(qa.x), x0) + dot(i8x4(qa.y), x1) + dot(i8x4(qa.z), x2) + dot(i8x4(qa.w), x3);
  let c = dot(i8x4(qb.x), x4) + dot(i8x4(qb.y), x5) + dot(i8x4(qb.z), x6) + dot(i8x4(qb.w), x7);
  return f16_lo(weights[bw + 68u]) * (sa * a + sb * c);
}
