// dot32 for Q5_K (q5_k.wgsl's 44-word block): Σ over elements 32b … 32b+31 of the row at word `base` of value·x,
// x as eight vec4 (x0 = elements 0–3 … x7 = 28–31) and `sx` their sum. Sub-block s = b & 7 of block b / 8: the
// low 4 bits from nibble half s & 1 of qs words 12 + 8(s/2) …, the fifth bit s of qh words 4 … 11 (word w: elements
// 4w … 4w+3; both two vec4 loads, a row being 44·K/256 words); value = d·sc_s·q − dmin·m_s, so the product is
// d·sc_s·Σ q·x − dmin·m_s·sx. Scales unpacked inline as in q4_k_dot32.wgsl (reads only `weights[…]`/`weights4[…]`).
fn dot32(base: u32, b: u32, x0: vec4<f32>, x1: vec4<f32>, x2: vec4<f32>, x3: vec4<f32>, x4: vec4<f32>, x5: vec4<f32>, x6: vec4<f32>, x7: vec4<f32>, sx: f32) -> f32 {
  let bw = base + (b >> 3u) * 44u;
  let s = b & 7u;
  let sh = (s & 1u) * 4u;
  let t = (s & 3u) * 8u;
  let dm = unpack2x16float(weights[bw]);
  let w1 = weights[bw + 1u] >> t;
  let w2 = weights[bw + 2u] >> t;
  let w3 = weights[bw + 3u] >> t;
  let sc = select(w1 & 63u, (w3 & 15u) | (((w1 >> 6u) & 3u) << 4u), s >= 4u);
  let mn = select(w2 & 63u, ((w3 >> 4u) & 15u) | (((w2 >> 6u) & 3u) << 4u), s >= 4u);
  let g4 = bw >> 2u;
  let h0 = weights4[g4 + 1u];
  let h1 = weights4[g4 + 2u];
  let q0 = weights4[g4 + 3u + 2u * (s >> 1u)];
  let q1 = weights4[g4 + 4u + 2u * (s >> 1u)];
  let qx = dot(nib4(q0.x, sh) + 16.0 * vec4<f32>(bits4(h0.x, s, 1u)), x0)
         + dot(nib4(q0.y, sh) + 16.0 * vec4<f32>(bits4(h0.y, s, 1u)), x1)
         + dot(nib4(q0.z, sh) + 16.0 * vec4<f32>(bits4(h0.z, s, 1u)), x2)
         + dot(nib4(q0.w, sh) + 16.0 * vec4<f32>(bits4(h0.w, s, 1u)), x3)
         + dot(nib4(q1.x, sh) + 16.0 * vec4<f32>(bits4(h1.x, s, 1u)), x4)
         + dot(nib4(q1.y, sh) + 16.0 * vec4<f32>(bits4(h1.y, s, 1u)), x5)
         + dot(nib4(q1.z, sh) + 16.0 * vec4<f32>(bits4(h1.z, s, 1u)), x6)
         + dot(nib4(q1.w, sh) + 16.0 * vec4<f32>(bits4(h1.w, s, 1u)), x7);
  return dm.x * f32(sc) * qx - dm.y * f32(mn) * sx;
}
