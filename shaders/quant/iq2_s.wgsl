// IQ2_S (ggml block_iq2_s, 256 elements). Repacked with the f16 d moved to the end, 21 words: bytes [0..31] low 8
// bits of the grid indices (point l of group ib: byte 4ib + l), [32..63] their sign bytes, [64..71] qh (bits 2l..2l+1
// of qh[ib]: the index's bits 8-9), [72..79] scales (low nibble for points 0-1, high for 2-3), word [20] f16 d (low).
// value = d·(0.5 + scale)·0.25 · iq2s_grid[idx] byte e%8 · sign. Needs tables iq2s_grid, iq_signs.
fn load4(base: u32, i: u32) -> vec4<f32> {
  let bw = base + (i >> 8u) * 21u;
  let e = i & 255u;
  let ib = e >> 5u;
  let l = (e >> 3u) & 3u;
  let h = (e >> 2u) & 1u;
  let idx = wbyte(bw, 4u * ib + l) | (((wbyte(bw, 64u + ib) >> (2u * l)) & 3u) << 8u);
  let sc = (wbyte(bw, 72u + ib) >> (4u * (l >> 1u))) & 15u;
  let db = f16_lo(weights[bw + 20u]) * (0.5 + f32(sc)) * 0.25;
  return (db * iq2_grid4(IQ2S_GRID[idx >> 1u], idx, h)) * iq_signs4(wbyte(bw, 32u + 4u * ib + l), 4u * h);
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
