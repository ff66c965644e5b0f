// IQ1_M (ggml block_iq1_m, 256 elements; 56 bytes, word aligned as in the GGUF). 14 words: bytes [0..31] low 8 bits
// of the grid indices (point l of group ib: byte 4ib + l), [32..47] qh (byte 2ib + l/2, nibble l%2: bits 0..2 the
// index's bits 8-10, bit 3 the delta sign), words [12..13] the u16 scales sc[0..3]: group ib's 3-bit scales at bits
// 6(ib%2) (points 0-1) and 6(ib%2)+3 (points 2-3) of sc[ib/2]; the f16 d is their top nibbles (sc[0] the lowest).
// value = d·(2·scale + 1) · (iq1s_grid[idx] element e%8 ± 0.125). Needs table iq1s_grid (2 bits per element, + 1).
fn load4(base: u32, i: u32) -> vec4<f32> {
  let bw = base + (i >> 8u) * 14u;
  let e = i & 255u;
  let ib = e >> 5u;
  let l = (e >> 3u) & 3u;
  let h = (e >> 2u) & 1u;
  let w12 = weights[bw + 12u];
  let w13 = weights[bw + 13u];
  let dh = ((w12 >> 12u) & 0xfu) | ((w12 >> 24u) & 0xf0u) | ((w13 >> 4u) & 0xf00u) | ((w13 >> 16u) & 0xf000u);
  let d = unpack2x16float(dh).x;
  let sc = (select(w12, w13, ib >= 4u) >> (16u * ((ib >> 1u) & 1u) + 6u * (ib & 1u) + 3u * (l >> 1u))) & 7u;
  let qh = wbyte(bw, 32u + 2u * ib + (l >> 1u)) >> (4u * (l & 1u));
  let idx = wbyte(bw, 4u * ib + l) | ((qh & 7u) << 8u);
  let delta = select(0.125, -0.125, (qh & 8u) != 0u);
  let gw = IQ1S_GRID[idx >> 1u] >> (16u * (idx & 1u) + 8u * h);
  let g = vec4<f32>((vec4<u32>(gw) >> vec4<u32>(0u, 2u, 4u, 6u)) & vec4<u32>(3u)) - 1.0;
  return (d * f32(2u * sc + 1u)) * (g + delta);
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
