// dot_chunk, generic form: gemv_sg's inner product of one 32-element chunk of a weight row with x', through the
// quant snippet's load4 (eight calls, each decoding its scale). Composed after the snippet for types whose snippet has
// no fast dot_chunk of its own (registry `webgpu.chunkDot`; src/backend/webgpu/gemv-sg-quant.ts); gemv_sg then runs
// with R = 1 (one row per chunk of x): R inlined copies of eight K-quant decoders would be too big to compile well.
// Unrolled with constant indices: a loop indexing xv at run time puts it in scratch memory on compilers that keep
// the loop (lavapipe: 2× slower).
// base: the row's first word; so: the row's scale origin (row-split snippets' scale_origin; unused here, 0); c: the
// chunk (elements 32c … 32c + 31); xv: x' of those elements; xsum: their sum.
fn scale_origin(base: u32) -> u32 { return 0u; }
fn dot_chunk(base: u32, so: u32, c: u32, xv: array<vec4<f32>, 8>, xsum: f32) -> f32 {
  let i = c * 32u;
  return dot(load4(base, i), xv[0]) + dot(load4(base, i + 4u), xv[1]) + dot(load4(base, i + 8u), xv[2]) +
    dot(load4(base, i + 12u), xv[3]) + dot(load4(base, i + 16u), xv[4]) + dot(load4(base, i + 20u), xv[5]) +
    dot(load4(base, i + 24u), xv[6]) + dot(load4(base, i + 28u), xv[7]);
}
