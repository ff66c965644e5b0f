// Sign helpers of the IQ2/IQ3 quant snippets (ggml ksigns_iq2xs, kmask_iq2xs).

/** ggml ksigns_iq2xs[s7]: a 7-bit sign index with its parity as the eighth sign (bit 7). */
fn iq_ksigns(s7: u32) -> u32 { return s7 | ((countOneBits(s7) & 1u) << 7u); }

/** ±1 for the four elements first..first+3 of a sign byte `s` (bit set = negative). */
fn iq_signs4(s: u32, first: u32) -> vec4<f32> {
  let bits = (vec4<u32>(s) >> (vec4<u32>(first) + vec4<u32>(0u, 1u, 2u, 3u))) & vec4<u32>(1u);
  return select(vec4<f32>(1.0), vec4<f32>(-1.0), bits != vec4<u32>(0u));
}

/** The four bytes of a grid word as f32 (unsigned grid values). */
fn iq_grid4(w: u32) -> vec4<f32> { return vec4<f32>(bits4(w, 0u, 0xffu)); }
