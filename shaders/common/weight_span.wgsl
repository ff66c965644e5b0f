// weight_span: the words [start, end) of the weight binding that holds the row at word `base` — what a row-split
// quant snippet (shaders/quant/*_rows.wgsl) finds a row's scales from: they sit right-justified at `end`, in reverse
// (src/backend/webgpu/upload.ts GpuQuantLayout.rowSplit). Here the whole binding: one weight part, or one member's
// range of a Q|K|V / gate|up buffer. Composed for the kernels that bind one weight at a time (embed, gemm, gemv_id,
// gemv_rows); gemv_io.wgsl defines its own for gemv / gemv_sg, which bind a whole group buffer.
fn weight_span(base: u32) -> vec2<u32> {
  return vec2<u32>(0u, arrayLength(&weights));
}
