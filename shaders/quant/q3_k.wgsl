// Q3_K (ggml block_q3_K, 256 elements). Repacked block, 28 words: [0..7] hmask[32], [8..23] qs[64] (low 2 bits),
// [24..26] scales[12] (sixteen 6-bit scales, packed as in ggml), [27] low half = f16 d.
// Element e: n = e/128, j = (e%128)/32, l = e%32, k = 8n + 2j + l/16 → q = (qs[32n + l] >> 2j) & 3,
// high bit = (hmask[l] >> (4n + j)) & 1; value = d·(scale_k − 32)·(q − (high ? 0 : 4)).
fn q3k_scale(bw: u32, k: u32) -> f32 {
  let low = (wbyte(bw, 96u + (k & 7u)) >> ((k >> 3u) * 4u)) & 15u;
  let high = (wbyte(bw, 104u + (k & 3u)) >> (2u * (k >> 2u))) & 3u;
  return f32(i32(low | (high << 4u)) - 32);
}
fn load4(base: u32, i: u32) -> vec4<f32> {
  let bw = base + (i >> 8u) * 28u;
  let e = i & 255u;
  let n = e >> 7u;
  let j = (e >> 5u) & 3u;
  let l = e & 31u;
  let dl = f16_lo(weights[bw + 27u]) * q3k_scale(bw, n * 8u + j * 2u + (l >> 4u));
  let q = vec4<f32>(bits4(weights[bw + 8u + ((32u * n + l) >> 2u)], 2u * j, 3u));
  let h = vec4<f32>(bits4(weights[bw + (l >> 2u)], 4u * n + j, 1u));
  return dl * (q - 4.0 + 4.0 * h);
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
