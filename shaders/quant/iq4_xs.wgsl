// IQ4_XS (ggml block_iq4_xs, 256 elements; GGUF layout is word aligned). Block, 34 words: [0] f16 d (low) and
// scales_h (high 16 bits), [1] scales_l[4], [2..33] qs[128] (nibble indices into kvalues_iq4nl).
// Sub-block ib = e/32 (8 of 32): ls = ((scales_l[ib/2] >> 4(ib%2)) & 15) | (((scales_h >> 2ib) & 3) << 4);
// element: q = (qs[16ib + l%16] >> 4(l/16)) & 15; value = d·(ls − 32)·kvalues[q].
const KVALUES_IQ4NL = array<f32, 16>(-127.0, -104.0, -83.0, -65.0, -49.0, -35.0, -22.0, -10.0,
                                      1.0, 13.0, 25.0, 38.0, 53.0, 69.0, 89.0, 113.0);
fn iq4_lookup(q: vec4<u32>) -> vec4<f32> {
  return vec4<f32>(KVALUES_IQ4NL[q.x], KVALUES_IQ4NL[q.y], KVALUES_IQ4NL[q.z], KVALUES_IQ4NL[q.w]);
}
fn load4(base: u32, i: u32) -> vec4<f32> {
  let bw = base + (i >> 8u) * 34u;
  let e = i & 255u;
  let ib = e >> 5u;
  let r = e & 31u;
  let w0 = weights[bw];
  let ls = ((wbyte(bw, 4u + (ib >> 1u)) >> (4u * (ib & 1u))) & 15u) | (((w0 >> (16u + 2u * ib)) & 3u) << 4u);
  let dl = f16_lo(w0) * f32(i32(ls) - 32);
  return dl * iq4_lookup(bits4(weights[bw + 2u + ((16u * ib + (r & 15u)) >> 2u)], select(0u, 4u, r >= 16u), 15u));
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
