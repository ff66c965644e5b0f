// Q8_0 (ggml block_q8_0, 32 elements), row-split layout of the hardware kernels: exactly the GGUF's bytes, reordered
// in two regions per binding (src/backend/webgpu/upload.ts GpuQuantLayout.rowSplit) — the rows' block bodies, row r
// at word base = 8·nb·r (block b: qs[32] int8 at words base + 8b…8b+7, element e = byte e), nb = p.k / 32; then the
// f16 d of every block, reversed and right-justified at the end of the binding's span (weight_span): block b of the
// row at `base` is half scale_origin(base) − b. value = q·d.
/** Half index of block 0's scale of the row at word `base` (block b: this − b). */
fn scale_origin(base: u32) -> u32 {
  let s = weight_span(base);
  return 2u * s.y - 1u - (base - s.x) / 8u;
}
/** The f16 scale of block b of the row whose scale origin is `so`. */
fn row_scale(so: u32, b: u32) -> f32 {
  let h = so - b;
  return unpack2x16float(weights[h >> 1u])[h & 1u];
}
fn load4(base: u32, i: u32) -> vec4<f32> {
  let b = i >> 5u;
  return i8x4(weights[base + 8u * b + ((i & 31u) >> 2u)]) * row_scale(scale_origin(base), b);
}
fn load1(base: u32, i: u32) -> f32 { return load4(base, i & ~3u)[i & 3u]; }
/** gemv_sg's chunk c = block c of the row at `base` dotted with xv: its 8 quant words loaded once, its scale once. */
fn dot_chunk(base: u32, so: u32, c: u32, xv: array<vec4<f32>, 8>, xsum: f32) -> f32 {
  let qb = base + 8u * c;
  let a = vec4<u32>(weights[qb], weights[qb + 1u], weights[qb + 2u], weights[qb + 3u]);
  let b = vec4<u32>(weights[qb + 4u], weights[qb + 5u], weights[qb + 6u], weights[qb + 7u]);
  let d = row_scale(so, c);
  let s = dot(i8x4(a.x), xv[0]) + dot(i8x4(a.y), xv[1]) + dot(i8x4(a.z), xv[2]) + dot(i8x4(a.w), xv[3]) +
    dot(i8x4(b.x), xv[4]) + dot(i8x4(b.y), xv[5]) + dot(i8x4(b.z), xv[6]) + dot(i8x4(b.w), xv[7]);
  return d * s;
}
