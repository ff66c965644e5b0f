// dot32 for Q5_K re-coded to bytes (q5_k_i8.wgsl's 72-word block): Σ over elements 32b … 32b+31 of the row at word
// `base` of value·x, x as eight vec4 (x0 = elements 0–3 … x7 = 28–31) and `sx` their sum. Those 32 elements are
// sub-block s = b & 7, words 8s … 8s+7 of block b / 8: two vec4 loads, the block being 16-byte aligned; value =
// d·sc_s·q − dmin·m_s, so the product is d·sc_s·Σ q·x − dmin·m_s·sx. Reads only `weights[…]` / `weights4[…]`, so
// gemv_bcast's renamed copy reads `up_w`.
fn dot32(base: u32, b: u32, x0: vec4<f32>, x1: vec4<f32>, x2: vec4<f32>, x3: vec4<f32>, x4: vec4<f32>, x5: vec4<f32>, x6: vec4<f32>, x7: vec4<f32>, sx: f32) -> f32 {
  let bw = base + (b >> 3u) * 72u;
  let s = b & 7u;
  let q4 = (bw >> 2u) + 2u * s;
  let qa = weights4[q4];
  let qb = weights4[q4 + 1u];
  let dm = unpack2x16float(weights[bw + 68u]);
  let sh = 8u * (s & 3u);
  let sc = f32((weights[bw + 64u + (s >> 2u)] >> sh) & 0xffu);
  let mn = f32((weights[bw + 66u + (s >> 2u)] >> sh) & 0xffu);
  let qx = dot(i8x4(qa.x), x0) + dot(i8x4(qa.y), x1) + dot(i8x4(qa.z), x2) + dot(i8x4(qa.w), x3)
         + dot(i8x4(qb.x), x4) + dot(i8x4(qb.y), x5) + dot(i8x4(qb.z), x6) + dot(i8x4(qb.w), x7);
  return dm.x * sc * qx - dm.y * mn * sx;
}
