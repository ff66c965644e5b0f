// IQ2_XS (ggml block_iq2_xs, 256 elements). Repacked with the f16 d moved to the end, 19 words: [0..15] qs (u16 per
// 8-element point: bits 0..8 grid index, 9..15 sign index; point l of group ib is u16 4ib + l), [16..17] scales[8]
// (group ib: low nibble for points 0-1, high for 2-3), [18] f16 d (low).
// value = d·(0.5 + scale)·0.25 · iq2xs_grid[idx] byte e%8 · sign. Needs tables iq2xs_grid, iq_signs.
fn load4(base: u32, i: u32) -> vec4<f32> {
  let bw = base + (i >> 8u) * 19u;
  let e = i & 255u;
  let ib = e >> 5u;
  let l = (e >> 3u) & 3u;
  let h = (e >> 2u) & 1u;
  let v = (weights[bw + 2u * ib + (l >> 1u)] >> (16u * (l & 1u))) & 0xffffu;
  let sc = (wbyte(bw, 64u + ib) >> (4u * (l >> 1u))) & 15u;
  let db = f16_lo(weights[bw + 18u]) * (0.5 + f32(sc)) * 0.25;
  let idx = v & 511u;
  return (db * iq2_grid4(IQ2XS_GRID[idx >> 1u], idx, h)) * iq_signs4(iq_ksigns(v >> 9u), 4u * h);
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
