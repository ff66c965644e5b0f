// dot_chunk, generic form: gemv_sg's inner product of one 32-element chunk of a weight row with x', through the
// quant snippet's load4 (eight calls, each decoding its scale). Composed after the snippet for types whose snippet has
// no fast dot_chunk of its own (registry `webgpu.chunkDot`; src/backend/webgpu/gemv-sg-quant.ts). A loop, not eight
// inlined load4: the K-quant decoders are long, and gemv_sg calls this R (×2 with GLU) times per chunk.
// base: the row's first word; c: the chunk (elements 32c … 32c + 31); xv: x' of those elements; xsum: their sum.
fn dot_chunk(base: u32, c: u32, xv: array<vec4<f32>, 8>, xsum: f32) -> f32 {
  var xs = xv;
  var s = 0.0;
  for (var j = 0u; j < 8u; j++) { s += dot(load4(base, c * 32u + 4u * j), xs[j]); }
  return s;
}
