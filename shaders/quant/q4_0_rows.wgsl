// Q4_0 (ggml block_q4_0, 32 elements), row-split layout of the hardware kernels: exactly the GGUF's bytes per row,
// reordered — [0 .. 4·nb) the blocks' qs[16] in order (block b at words 4b…4b+3; byte t: element t low nibble,
// element t+16 high nibble), then the nb f16 d (block b: half b&1 of word 4·nb + b/2), nb = p.k / 32. Rows are
// whole words (+2 bytes for an odd nb). value = (q − 8)·d. Reads p.k: every weight-reading kernel has it.
fn load4(base: u32, i: u32) -> vec4<f32> {
  let b = i >> 5u;
  let r = i & 31u;
  let d = unpack2x16float(weights[base + (p.k >> 5u) * 4u + (b >> 1u)])[b & 1u];
  let q = nib4(weights[base + 4u * b + ((r & 15u) >> 2u)], select(0u, 4u, r >= 16u));
  return (q - 8.0) * d;
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
