// dot32 for Q4_0 (grouped layout of q4_0.wgsl): Σ over the 32 elements of block `b` of the row at word `base` of
// value·x, with x as eight vec4 (x0 = elements 0–3 … x7 = 28–31) and `sx` their sum. The block's quants are one
// vec4<u32> load (`weights4`, the same buffer as `weights`); word w holds elements 4w…4w+3 (low nibbles) and
// 16+4w… (high), so Σ (q − 8)·d·x = d·(Σ q·x − 8·sx).
fn dot32(base: u32, b: u32, x0: vec4<f32>, x1: vec4<f32>, x2: vec4<f32>, x3: vec4<f32>, x4: vec4<f32>, x5: vec4<f32>, x6: vec4<f32>, x7: vec4<f32>, sx: f32) -> f32 {
  let g4 = (base >> 2u) + (b >> 2u) * 5u; // the group, in vec4 units
  let j = b & 3u;
  let q = weights4[g4 + j];
  let d = unpack2x16float(weights[(g4 + 4u) * 4u + (j >> 1u)])[j & 1u];
  let lo = dot(nib4(q.x, 0u), x0) + dot(nib4(q.y, 0u), x1) + dot(nib4(q.z, 0u), x2) + dot(nib4(q.w, 0u), x3);
  let hi = dot(nib4(q.x, 4u), x4) + dot(nib4(q.y, 4u), x5) + dot(nib4(q.z, 4u), x6) + dot(nib4(q.w, 4u), x7);
  return d * ((lo + hi) - 8.0 * sx);
}
