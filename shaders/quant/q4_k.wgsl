// Q4_K (ggml block_q4_K, 256 elements; GGUF layout is word aligned). Block, 36 words: [0] f16 d (low), f16 dmin
// (high), [1..3] scales[12] (eight 6-bit scale/min pairs, ggml get_scale_min_k4), [4..35] qs[128].
// Element e: c = e/64, hi = (e%64)/32, l = e%32, sub = 2c + hi → q = (qs[32c + l] >> 4hi) & 15;
// value = d·sc_sub·q − dmin·m_sub.
fn scale_min_k4(bw: u32, j: u32) -> vec2<f32> {
  if (j < 4u) {
    return vec2<f32>(f32(wbyte(bw, 4u + j) & 63u), f32(wbyte(bw, 8u + j) & 63u));
  }
  let s = wbyte(bw, 8u + j);
  let sc = (s & 15u) | ((wbyte(bw, j) >> 6u) << 4u);
  let m = (s >> 4u) | ((wbyte(bw, 4u + j) >> 6u) << 4u);
  return vec2<f32>(f32(sc), f32(m));
}
fn load4(base: u32, i: u32) -> vec4<f32> {
  let bw = base + (i >> 8u) * 36u;
  let e = i & 255u;
  let c = e >> 6u;
  let hi = (e >> 5u) & 1u;
  let l = e & 31u;
  let dm = unpack2x16float(weights[bw]);
  let sm = scale_min_k4(bw, 2u * c + hi);
  let q = nib4(weights[bw + 4u + ((32u * c + l) >> 2u)], 4u * hi);
  return q * (dm.x * sm.x) - dm.y * sm.y;
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
