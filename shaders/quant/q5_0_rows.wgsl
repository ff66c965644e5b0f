// Q5_0 (ggml block_q5_0, 32 elements), row-split layout of the hardware kernels: exactly the GGUF's bytes per row,
// reordered — [0 .. 5·nb) block bodies of 5 words ([0] qh: bit e = 5th bit of element e, [1..4] qs[16] as Q4_0),
// then the nb f16 d (block b: half b&1 of word 5·nb + b/2), nb = p.k / 32. value = (q − 16)·d. Reads p.k.
fn load4(base: u32, i: u32) -> vec4<f32> {
  let b = i >> 5u;
  let bw = base + b * 5u;
  let r = i & 31u;
  let d = unpack2x16float(weights[base + (p.k >> 5u) * 5u + (b >> 1u)])[b & 1u];
  let lo = nib4(weights[bw + 1u + ((r & 15u) >> 2u)], select(0u, 4u, r >= 16u));
  let hi = vec4<f32>((vec4<u32>(weights[bw]) >> vec4<u32>(r, r + 1u, r + 2u, r + 3u)) & vec4<u32>(1u)) * 16.0;
  return (lo + hi - 16.0) * d;
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
