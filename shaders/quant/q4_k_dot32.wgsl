// dot32 for Q4_K (q4_k.wgsl's 36-word block): Σ over elements 32b … 32b+31 of the row at word `base` of value·x,
// x as eight vec4 (x0 = elements 0–3 … x7 = 28–31) and `sx` their sum. Those 32 elements are sub-block s = b & 7 of
// block b / 8: chunk c = s / 2, nibble half s & 1 of qs words 8c … 8c+7 (word w: elements 4w … 4w+3, two vec4
// loads: a row is 36·K/256 words, so blocks stay 16-byte aligned); value = d·sc_s·q − dmin·m_s, so the product is
// d·sc_s·Σ q·x − dmin·m_s·sx. The 6-bit scale/min pair (ggml get_scale_min_k4) is unpacked inline from scale
// words 1–3: this function reads only `weights[…]` / `weights4[…]`, so gemv_bcast's renamed copy reads `up_w`.
fn dot32(base: u32, b: u32, x0: vec4<f32>, x1: vec4<f32>, x2: vec4<f32>, x3: vec4<f32>, x4: vec4<f32>, x5: vec4<f32>, x6: vec4<f32>, x7: vec4<f32>, sx: f32) -> f32 {
  let bw = base + (b >> 3u) * 36u;
  let s = b & 7u;
  let sh = (s & 1u) * 4u;
  let t = (s & 3u) * 8u;
  let dm = unpack2x16float(weights[bw]);
  let w1 = weights[bw + 1u] >> t; // scales[s & 3] (and, for s ≥ 4, the top bits of scales[s − 4])
  let w2 = weights[bw + 2u] >> t; // scales[4 + (s & 3)]
  let w3 = weights[bw + 3u] >> t; // scales[8 + (s & 3)]
  let sc = select(w1 & 63u, (w3 & 15u) | (((w1 >> 6u) & 3u) << 4u), s >= 4u);
  let mn = select(w2 & 63u, ((w3 >> 4u) & 15u) | (((w2 >> 6u) & 3u) << 4u), s >= 4u);
  let g4 = (bw >> 2u) + 1u + 2u * (s >> 1u);
  let q0 = weights4[g4];
  let q1 = weights4[g4 + 1u];
  let qx = dot(nib4(q0.x, sh), x0) + dot(nib4(q0.y, sh), x1) + dot(nib4(q0.z, sh), x2) + dot(nib4(q0.w, sh), x3)
         + dot(nib4(q1.x, sh), x4) + dot(nib4(q1.y, sh), x5) + dot(nib4(q1.z, sh), x6) + dot(nib4(q1.w, sh), x7);
  return dm.x * f32(sc) * qx - dm.y * f32(mn) * sx;
}
