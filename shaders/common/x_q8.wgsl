// x_q8: gemv_sg's Q8 activations (Q8_X; hosts with the WGSL language feature packed_4x8_integer_dot_product): one
// 32-element chunk of x' quantised as llama.cpp's block_q8_0 (ggml-quants.c quantize_row_q8_0: d = max|x| / 127,
// q = round(x / d) as int8, d kept as f16), packed four int8 to a u32 for dot4I8Packed. The chunk is quantised once
// per row group and reused for its R rows (no extra dispatch). Composed with a quant snippet's `dot_chunk_q8`
// (shaders/quant/<type>_rows_dot4.wgsl); shaders/common/x_q8_none.wgsl stands in for both elsewhere.

struct Q8Chunk {
  q: array<u32, 8>, // elements 4j … 4j + 3 in word j, int8 each
  d: f32,           // the block scale (f16-rounded)
  qsum: i32,        // Σ q (for offsets such as Q4_0's −8: Σ(w − 8)·q = Σ w·q − 8·Σ q)
}

/** The int8 values of one vec4 of x' at inverse scale `id`. */
fn q8_word(v: vec4<f32>, id: f32) -> vec4<i32> { return vec4<i32>(round(v * id)); }

/** x' of one chunk (eight vec4) as a Q8_0 block. */
fn quantize_chunk(xv: array<vec4<f32>, 8>) -> Q8Chunk {
  let m = max(max(max(abs(xv[0]), abs(xv[1])), max(abs(xv[2]), abs(xv[3]))),
    max(max(abs(xv[4]), abs(xv[5])), max(abs(xv[6]), abs(xv[7]))));
  let d = max(max(m.x, m.y), max(m.z, m.w)) / 127.0;
  let id = select(0.0, 1.0 / d, d > 0.0);
  let v0 = q8_word(xv[0], id);
  let v1 = q8_word(xv[1], id);
  let v2 = q8_word(xv[2], id);
  let v3 = q8_word(xv[3], id);
  let v4 = q8_word(xv[4], id);
  let v5 = q8_word(xv[5], id);
  let v6 = q8_word(xv[6], id);
  let v7 = q8_word(xv[7], id);
  let s = v0 + v1 + v2 + v3 + v4 + v5 + v6 + v7;
  return Q8Chunk(
    array<u32, 8>(pack4xI8(v0), pack4xI8(v1), pack4xI8(v2), pack4xI8(v3), pack4xI8(v4), pack4xI8(v5),
      pack4xI8(v6), pack4xI8(v7)),
    unpack2x16float(pack2x16float(vec2<f32>(d, 0.0))).x,
    s.x + s.y + s.z + s.w,
  );
}
