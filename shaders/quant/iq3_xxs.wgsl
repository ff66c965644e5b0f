// IQ3_XXS (ggml block_iq3_xxs, 256 elements). Repacked with the f16 d moved to the end, 25 words: bytes [0..63] grid
// indices (4 elements each: elements 4p..4p+3 of group ib use byte 8ib + p), words [16..23] per group aux = four 7-bit
// sign indices (bits 7l.., for elements 8l..8l+7) and the 4-bit scale (bits 28..31), [24] f16 d (low).
// value = d·(0.5 + scale)·0.5 · iq3xxs_grid[idx] byte e%4 · sign. Needs tables iq3xxs_grid, iq_signs.
fn load4(base: u32, i: u32) -> vec4<f32> {
  let bw = base + (i >> 8u) * 25u;
  let e = i & 255u;
  let ib = e >> 5u;
  let l = (e >> 3u) & 3u;
  let h = (e >> 2u) & 1u;
  let aux = weights[bw + 16u + ib];
  let db = f16_lo(weights[bw + 24u]) * (0.5 + f32(aux >> 28u)) * 0.5;
  let idx = wbyte(bw, e >> 2u);
  let c = iq3_codes(IQ3XXS_GRID[idx >> 1u], idx);
  let g = select(vec4<f32>(4u + 8u * c), vec4<f32>(62.0), c == vec4<u32>(7u)); // levels 4, 12, …, 52, 62
  return (db * g) * iq_signs4(iq_ksigns((aux >> (7u * l)) & 127u), 4u * h);
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
