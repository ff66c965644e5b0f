// Q8_0 (ggml block_q8_0, 32 elements), row-split layout of the hardware kernels: exactly the GGUF's bytes per row,
// reordered — [0 .. 8·nb) the blocks' qs[32] int8 in order (block b at words 8b…8b+7, element e = byte e), then the
// nb f16 d (block b: half b&1 of word 8·nb + b/2), nb = p.k / 32. value = q·d. Reads p.k (every weight kernel has it).
fn load4(base: u32, i: u32) -> vec4<f32> {
  let b = i >> 5u;
  let d = unpack2x16float(weights[base + (p.k >> 5u) * 8u + (b >> 1u)])[b & 1u];
  return i8x4(weights[base + 8u * b + ((i & 31u) >> 2u)]) * d;
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
/** gemv_sg's chunk c = block c of the row at `base` dotted with xv: its 8 quant words loaded once, its scale once. */
fn dot_chunk(base: u32, c: u32, xv: array<vec4<f32>, 8>, xsum: f32) -> f32 {
  let qb = base + 8u * c;
  let a = vec4<u32>(weights[qb], weights[qb + 1u], weights[qb + 2u], weights[qb + 3u]);
  let b = vec4<u32>(weights[qb + 4u], weights[qb + 5u], weights[qb + 6u], weights[qb + 7u]);
  let d = unpack2x16float(weights[base + (p.k >> 5u) * 8u + (c >> 1u)])[c & 1u];
  let s = dot(i8x4(a.x), xv[0]) + dot(i8x4(a.y), xv[1]) + dot(i8x4(a.z), xv[2]) + dot(i8x4(a.w), xv[3]) +
    dot(i8x4(b.x), xv[4]) + dot(i8x4(b.y), xv[5]) + dot(i8x4(b.z), xv[6]) + dot(i8x4(b.w), xv[7]);
  return d * s;
}
