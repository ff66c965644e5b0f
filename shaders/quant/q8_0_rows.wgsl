// Q8_0 (ggml block_q8_0, 32 elements), row-split layout of the hardware kernels: exactly the GGUF's bytes per row,
// reordered — [0 .. 8·nb) the blocks' qs[32] int8 in order (block b at words 8b…8b+7, element e = byte e), then the
// nb f16 d (block b: half b&1 of word 8·nb + b/2), nb = p.k / 32. value = q·d. Reads p.k (every weight kernel has it).
fn load4(base: u32, i: u32) -> vec4<f32> {
  let b = i >> 5u;
  let d = unpack2x16float(weights[base + (p.k >> 5u) * 8u + (b >> 1u)])[b & 1u];
  return i8x4(weights[base + 8u * b + ((i & 31u) >> 2u)]) * d;
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
