// dot32 for Q6_K (q6_k.wgsl's 53-word block): Σ over elements 32b … 32b+31 of the row at word `base` of value·x,
// x as eight vec4 (x0 = elements 0–3 … x7 = 28–31). Sub-block s = b & 7 of block b / 8: half n = s / 4, group
// g = s & 3; the low 4 bits from nibble half g / 2 of ql words 16n + 8(g & 1) …, the high 2 bits at bit 2g of qh
// words 32 + 8n … (word w: elements 4w … 4w+3; scalar loads, 53-word blocks are not 16-byte aligned); elements 0–15
// take the int8 scale scales[8n + 2g], 16–31 the next one; value = d·scale·(q − 32). Reads only `weights[…]`, so
// gemv_bcast's renamed copy reads `up_w`.
fn dot32(base: u32, b: u32, x0: vec4<f32>, x1: vec4<f32>, x2: vec4<f32>, x3: vec4<f32>, x4: vec4<f32>, x5: vec4<f32>, x6: vec4<f32>, x7: vec4<f32>, sx: f32) -> f32 {
  let bw = base + (b >> 3u) * 53u;
  let s = b & 7u;
  let n = s >> 2u;
  let g = s & 3u;
  let lw = bw + 16u * n + 8u * (g & 1u);
  let hw = bw + 32u + 8u * n;
  let ls = 4u * (g >> 1u);
  let hs = 2u * g;
  let sw = weights[bw + 48u + 2u * n + (g >> 1u)] >> (16u * (g & 1u)); // the two int8 scales, low bytes
  let sa = f32(bitcast<i32>(sw << 24u) >> 24u);
  let sb = f32(bitcast<i32>(sw << 16u) >> 24u);
  let a = dot(vec4<f32>(bits4(weights[lw], ls, 15u) | (bits4(weights[hw], hs, 3u) << vec4<u32>(4u))) - 32.0, x0)
        + dot(vec4<f32>(bits4(weights[lw + 1u], ls, 15u) | (bits4(weights[hw + 1u], hs, 3u) << vec4<u32>(4u))) - 32.0, x1)
        + dot(vec4<f32>(bits4(weights[lw + 2u], ls, 15u) | (bits4(weights[hw + 2u], hs, 3u) << vec4<u32>(4u))) - 32.0, x2)
        + dot(vec4<f32>(bits4(weights[lw + 3u], ls, 15u) | (bits4(weights[hw + 3u], hs, 3u) << vec4<u32>(4u))) - 32.0, x3);
  let c = dot(vec4<f32>(bits4(weights[lw + 4u], ls, 15u) | (bits4(weights[hw + 4u], hs, 3u) << vec4<u32>(4u))) - 32.0, x4)
        + dot(vec4<f32>(bits4(weights[lw + 5u], ls, 15u) | (bits4(weights[hw + 5u], hs, 3u) << vec4<u32>(4u))) - 32.0, x5)
        + dot(vec4<f32>(bits4(weights[lw + 6u], ls, 15u) | (bits4(weights[hw + 6u], hs, 3u) << vec4<u32>(4u))) - 32.0, x6)
        + dot(vec4<f32>(bits4(weights[lw + 7u], ls, 15u) | (bits4(weights[hw + 7u], hs, 3u) << vec4<u32>(4u))) - 32.0, x7);
  return f16_lo(weights[bw + 52u]) * (sa * a + sb * c);
}
