// IQ3_S (ggml block_iq3_s, 256 elements). Repacked with the f16 d moved to the end, 28 words: bytes [0..63] low 8
// bits of the grid indices (4 elements each: byte e/4), [64..71] qh (bit p of qh[ib]: bit 8 of point p of group ib),
// [72..103] sign bytes (byte e/8), [104..107] scales (group ib: nibble ib%2 of byte ib/2), word [27] f16 d (low).
// value = d·(1 + 2·scale) · iq3s_grid[idx] byte e%4 · sign. Needs tables iq3s_grid, iq_signs.
fn load4(base: u32, i: u32) -> vec4<f32> {
  let bw = base + (i >> 8u) * 28u;
  let e = i & 255u;
  let ib = e >> 5u;
  let p = (e >> 2u) & 7u;
  let h = (e >> 2u) & 1u;
  let idx = wbyte(bw, e >> 2u) | (((wbyte(bw, 64u + ib) >> p) & 1u) << 8u);
  let sc = (wbyte(bw, 104u + (ib >> 1u)) >> (4u * (ib & 1u))) & 15u;
  let db = f16_lo(weights[bw + 27u]) * f32(1u + 2u * sc);
  return (db * vec4<f32>(2u * iq3_codes(IQ3S_GRID[idx >> 1u], idx) + 1u)) * iq_signs4(wbyte(bw, 72u + (e >> 3u)), 4u * h);
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
