// x_q8_none: what gemv_sg composes where its Q8-activation path (Q8_X, shaders/common/x_q8.wgsl and a snippet's
// dot_chunk_q8) is not used — the same names, never called (Q8_X is false), and no packed-integer builtins, so the
// kernel compiles on adapters without the packed_4x8_integer_dot_product language feature.

struct Q8Chunk {
  q: array<u32, 8>,
  d: f32,
  qsum: i32,
}

fn quantize_chunk(xv: array<vec4<f32>, 8>) -> Q8Chunk { return Q8Chunk(array<u32, 8>(), 0.0, 0); }

fn dot_chunk_q8(base: u32, so: u32, c: u32, xq: Q8Chunk) -> f32 { return 0.0; }
