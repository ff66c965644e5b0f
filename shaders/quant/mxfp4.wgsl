// MXFP4 (ggml block_mxfp4, 32 elements). Repacked with the E8M0 scale byte moved to the end, 5 words: [0..3] qs[16]
// (byte j: element j low nibble, j+16 high), [4] e (low byte). value = kvalues_mxfp4[q] · 2^(e − 128)
// (ggml_e8m0_to_fp32_half: f32 bits (e − 1) << 23, or the subnormal 0x00200000 << e for e < 2).
const KVALUES_MXFP4 = array<f32, 16>(0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 0.0, -1.0, -2.0, -3.0, -4.0, -6.0, -8.0, -12.0);
fn load4(base: u32, i: u32) -> vec4<f32> {
  let bw = base + (i >> 5u) * 5u;
  let r = i & 31u;
  let e = weights[bw + 4u] & 0xffu;
  let d = bitcast<f32>(select((e - 1u) << 23u, 0x00200000u << e, e < 2u));
  let q = bits4(weights[bw + ((r & 15u) >> 2u)], select(0u, 4u, r >= 16u), 0xfu);
  return vec4<f32>(KVALUES_MXFP4[q.x], KVALUES_MXFP4[q.y], KVALUES_MXFP4[q.z], KVALUES_MXFP4[q.w]) * d;
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
