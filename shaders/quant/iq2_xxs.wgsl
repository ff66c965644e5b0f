// IQ2_XXS (ggml block_iq2_xxs, 256 elements). Repacked with the f16 d moved to the end, 17 words: [0..15] qs, per
// 32-element group ib two words: [2ib] four grid indices (byte l: point l, 8 elements), [2ib+1] aux = four 7-bit
// sign indices (bits 7l..) and the 4-bit scale (bits 28..31); [16] f16 d (low). Element e: ib = e/32, l = (e/8)%4;
// value = d·(0.5 + scale)·0.25 · iq2xxs_grid[idx] byte e%8 · sign (ksigns_iq2xs bit e%8). Needs tables iq2xxs_grid, iq_signs.
fn load4(base: u32, i: u32) -> vec4<f32> {
  let bw = base + (i >> 8u) * 17u;
  let e = i & 255u;
  let ib = e >> 5u;
  let l = (e >> 3u) & 3u;
  let h = (e >> 2u) & 1u;
  let aux = weights[bw + 2u * ib + 1u];
  let idx = (weights[bw + 2u * ib] >> (8u * l)) & 0xffu;
  let db = f16_lo(weights[bw + 16u]) * (0.5 + f32(aux >> 28u)) * 0.25;
  let s = iq_ksigns((aux >> (7u * l)) & 127u);
  return (db * iq2_grid4(IQ2XXS_GRID[idx >> 1u], idx, h)) * iq_signs4(s, 4u * h);
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
