// Q2_K (ggml block_q2_K, 256 elements; GGUF layout is word aligned). Block, 21 words: [0..3] scales[16]
// (low nibble: scale, high nibble: min), [4..19] qs[64] (2-bit quants), [20] f16 d (low), f16 dmin (high).
// Element e: half n = e/128, group j = (e%128)/32, l = e%32 → q = (qs[32n + l] >> 2j) & 3,
// scale byte 8n + 2j + l/16; value = d·(sc & 15)·q − dmin·(sc >> 4).
fn load4(base: u32, i: u32) -> vec4<f32> {
  let bw = base + (i >> 8u) * 21u;
  let e = i & 255u;
  let n = e >> 7u;
  let j = (e >> 5u) & 3u;
  let l = e & 31u;
  let sc = wbyte(bw, n * 8u + j * 2u + (l >> 4u));
  let dm = unpack2x16float(weights[bw + 20u]);
  let q = vec4<f32>(bits4(weights[bw + 4u + ((32u * n + l) >> 2u)], 2u * j, 3u));
  return q * (dm.x * f32(sc & 15u)) - dm.y * f32(sc >> 4u);
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
