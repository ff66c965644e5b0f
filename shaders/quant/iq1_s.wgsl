// IQ1_S (ggml block_iq1_s, 256 elements). Repacked with the f16 d moved to the end, 13 words: bytes [0..31] low 8
// bits of the grid indices (point l of group ib: byte 4ib + l), [32..47] qh u16 per group (bits 3l..3l+2: the
// index's bits 8-10; bits 12..14 scale; bit 15 delta sign), word [12] f16 d (low).
// value = d·(2·scale + 1) · (iq1s_grid[idx] element e%8 ± 0.125). Needs table iq1s_grid (2 bits per element, + 1).
fn load4(base: u32, i: u32) -> vec4<f32> {
  let bw = base + (i >> 8u) * 13u;
  let e = i & 255u;
  let ib = e >> 5u;
  let l = (e >> 3u) & 3u;
  let h = (e >> 2u) & 1u;
  let qh = (weights[bw + 8u + (ib >> 1u)] >> (16u * (ib & 1u))) & 0xffffu;
  let idx = wbyte(bw, 4u * ib + l) | (((qh >> (3u * l)) & 7u) << 8u);
  let dl = f16_lo(weights[bw + 12u]) * f32(2u * ((qh >> 12u) & 7u) + 1u);
  let delta = select(0.125, -0.125, (qh & 0x8000u) != 0u);
  let gw = IQ1S_GRID[idx >> 1u] >> (16u * (idx & 1u) + 8u * h);
  let g = vec4<f32>((vec4<u32>(gw) >> vec4<u32>(0u, 2u, 4u, 6u)) & vec4<u32>(3u)) - 1.0;
  return dl * (g + delta);
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
