// Q6_K (ggml block_q6_K, 256 elements). Repacked block, 53 words: [0..31] ql[128] (low 4 bits), [32..47] qh[64]
// (high 2 bits), [48..51] scales[16] int8, [52] low half = f16 d.
// Element e: n = e/128, g = (e%128)/32, l = e%32 → low = (ql[64n + l + 32(g&1)] >> 4(g>>1)) & 15,
// high = (qh[32n + l] >> 2g) & 3, scale = scales[8n + l/16 + 2g]; value = d·scale·((low | high << 4) − 32).
fn load4(base: u32, i: u32) -> vec4<f32> {
  let bw = base + (i >> 8u) * 53u;
  let e = i & 255u;
  let n = e >> 7u;
  let g = (e >> 5u) & 3u;
  let l = e & 31u;
  let sc = f32(bitcast<i32>(wbyte(bw, 192u + 8u * n + (l >> 4u) + 2u * g) << 24u) >> 24u);
  let lo = bits4(weights[bw + ((64u * n + l + 32u * (g & 1u)) >> 2u)], 4u * (g >> 1u), 15u);
  let hi = bits4(weights[bw + 32u + ((32u * n + l) >> 2u)], 2u * g, 3u);
  let q = vec4<f32>(lo | (hi << vec4<u32>(4u))) - 32.0;
  return (f16_lo(weights[bw + 52u]) * sc) * q;
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
