// rope_multi: multi-stream rope (ggml_rope_multi: qwen2vl's M-RoPE, qwen3vl's interleaved M-RoPE), in place on x
// ([n, n_heads·head_dim]): NEOX pairs (i, i + n_rot/2) whose angle takes its position from one of four streams
// (t, h, w, e): pair i's sector is i mod Σsections; consecutive sections (t, then h, then w, then e), or, interleaved,
// sector % 3 = 0, 1, 2 → t, h, w while below 3·section, else e. Positions come from `pos` ((4, n) i32 at
// pos_offset, stream-major, an image's grid) when explicit_pos, else text rows (start_pos + row, same, same, 0).
// Linear scaling and YaRN as rope.wgsl. Dispatch: 1-D over n·n_heads·n_rot/2 pairs, (gx, gy) workgroups.
// Math: shaders/common/rope_math.wgsl.
// Reference: src/backend/cpu/rope.ts (ropeAngles with params.multi), src/backend/rope-multi.ts.

struct Params {
  cols: u32,
  head_dim: u32,
  n_rot: u32,
  start_pos: u32,
  is_neox: u32,      // 1: multi-stream rope rotates NEOX pairs
  total: u32,        // pairs to rotate: n · n_heads · n_rot/2
  n: u32,            // rows of the step: the stride of the position streams
  explicit_pos: u32, // 1: positions from `pos`; 0: text rows
  sec_t: u32,        // pairs per stream (rope.dimension_sections)
  sec_h: u32,
  sec_w: u32,
  sec_e: u32,
  interleaved: u32,  // 1: qwen3vl's interleaved layout
  freq_scale: f32,
  ext_factor: f32,   // YaRN mix (0 = off)
  mscale: f32,       // YaRN magnitude scale (1 without YaRN)
  corr_lo: f32,      // YaRN correction dims
  corr_hi: f32,
  pos_offset: u32,   // i32 entry of `pos` where the rows' streams start (a sequence of a multi-sequence step)
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;    // (n, cols) f32
@group(0) @binding(2) var<storage, read> inv_freq: array<f32>;   // (n_rot/2) f32
@group(0) @binding(3) var<storage, read> pos: array<i32>;        // (4, n) i32 streams at pos_offset (explicit_pos)

/** The stream (0 t, 1 h, 2 w, 3 e) pair i takes its position from. */
fn stream_of(i: u32) -> u32 {
  let sector = i % (p.sec_t + p.sec_h + p.sec_w + p.sec_e);
  if (p.interleaved != 0u) {
    let m = sector % 3u;
    if (m == 1u && sector < 3u * p.sec_h) { return 1u; }
    if (m == 2u && sector < 3u * p.sec_w) { return 2u; }
    if (m == 0u && sector < 3u * p.sec_t) { return 0u; }
    return 3u;
  }
  if (sector < p.sec_t) { return 0u; }
  if (sector < p.sec_t + p.sec_h) { return 1u; }
  if (sector < p.sec_t + p.sec_h + p.sec_w) { return 2u; }
  return 3u;
}

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  let g = (ids.wg.y * ids.nwg.x + ids.wg.x) * WG_SIZE + ids.lid;
  if (g >= p.total) { return; }
  let ab = pair_at(g, p.cols);
  let i = g % (p.n_rot / 2u);
  let s = stream_of(i);
  var at = select(p.start_pos + ab.z, 0u, s == 3u);
  if (p.explicit_pos != 0u) { at = u32(pos[p.pos_offset + s * p.n + ab.z]); }
  let cs = rotation(at, i);
  let x0 = x[ab.x];
  let x1 = x[ab.y];
  x[ab.x] = x0 * cs.x - x1 * cs.y;
  x[ab.y] = x0 * cs.y + x1 * cs.x;
}
