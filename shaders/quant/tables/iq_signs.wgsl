// Helpers of the IQ2/IQ3 quant snippets: ggml's sign tables (ksigns_iq2xs, kmask_iq2xs) and the decoders of the packed
// grid words of shaders/quant/tables/iq*_grid.wgsl (16 bits per grid entry, two entries per word).

/** ggml ksigns_iq2xs[s7]: a 7-bit sign index with its parity as the eighth sign (bit 7). */
fn iq_ksigns(s7: u32) -> u32 { return s7 | ((countOneBits(s7) & 1u) << 7u); }

/** ±1 for the four elements first..first+3 of a sign byte `s` (bit set = negative). */
fn iq_signs4(s: u32, first: u32) -> vec4<f32> {
  let bits = (vec4<u32>(s) >> (vec4<u32>(first) + vec4<u32>(0u, 1u, 2u, 3u))) & vec4<u32>(1u);
  return select(vec4<f32>(1.0), vec4<f32>(-1.0), bits != vec4<u32>(0u));
}

/** Elements 4h..4h+3 of IQ2 grid entry `idx` from its word `w` (2-bit codes of the levels 8, 25, 43). */
fn iq2_grid4(w: u32, idx: u32, h: u32) -> vec4<f32> {
  let s = 16u * (idx & 1u) + 8u * h;
  let c = (vec4<u32>(w) >> (vec4<u32>(s) + vec4<u32>(0u, 2u, 4u, 6u))) & vec4<u32>(3u);
  return select(select(vec4<f32>(8.0), vec4<f32>(25.0), c == vec4<u32>(1u)), vec4<f32>(43.0), c == vec4<u32>(2u));
}

/** The four 3-bit level codes of IQ3 grid entry `idx` from its word `w`. */
fn iq3_codes(w: u32, idx: u32) -> vec4<u32> {
  return (vec4<u32>(w) >> (vec4<u32>(16u * (idx & 1u)) + vec4<u32>(0u, 3u, 6u, 9u))) & vec4<u32>(7u);
}
