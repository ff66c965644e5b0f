/**
 * Multi-stream rotary embedding (llama.cpp `ggml_rope_multi`, Qwen2-VL's M-RoPE and Qwen3-VL's interleaved
 * M-RoPE): a NEOX rotation whose rotated pair i takes its angle from one of four position streams (t, h, w, e)
 * instead of one position. `rope.dimension_sections` [t, h, w, e] says how many pairs each stream owns:
 * consecutively (M-RoPE) or round-robin t, h, w (interleaved; pairs past 3·section fall to e). Text tokens sit at
 * (p, p, p, 0); image tokens at (p₀, p₀ + row, p₀ + col, 0) (mtmd `MTMD_POS_TYPE_MROPE`).
 */

/** The stream layout of a multi-stream rope (`RopeParams.multi`). */
export interface RopeSections {
  /** Pairs per stream [t, h, w, e] (`rope.dimension_sections`). */
  readonly sections: readonly [number, number, number, number];
  /** Interleaved t, h, w (ggml `GGML_ROPE_TYPE_IMROPE`, qwen3vl) instead of consecutive sections (qwen2vl). */
  readonly interleaved: boolean;
}

/** Streams of a step's rows: [4, n] stream-major (t of every row, then h, w, e), as ggml's position tensor. */
export type RopePositions = Int32Array;

/** The stream (0 t, 1 h, 2 w, 3 e) pair i of `nPairs` rotated pairs takes its position from (ggml_mrope_cache_init). */
export function ropeStreamOf(m: RopeSections, pair: number): number {
  const [t, h, w] = m.sections;
  const total = m.sections[0] + m.sections[1] + m.sections[2] + m.sections[3];
  const sector = pair % total;
  if (m.interleaved) {
    if (sector % 3 === 1 && sector < 3 * h) return 1;
    if (sector % 3 === 2 && sector < 3 * w) return 2;
    if (sector % 3 === 0 && sector < 3 * t) return 0;
    return 3;
  }
  if (sector < t) return 0;
  if (sector < t + h) return 1;
  if (sector < t + h + w) return 2;
  return 3;
}

/** The streams of text rows at positions startPos … startPos+n−1: (p, p, p, 0) each ([4, n]). */
export function textRopePositions(startPos: number, n: number): RopePositions {
  const out = new Int32Array(4 * n); // [4, n]
  for (let r = 0; r < n; r++) {
    out[r] = startPos + r;
    out[n + r] = startPos + r;
    out[2 * n + r] = startPos + r;
  }
  return out;
}

/**
 * The streams of an image of `nx` × `ny` tokens (raster order) placed at position `pos0`: (pos0, pos0 + row,
 * pos0 + col, 0) ([4, nx·ny]); the text after it continues at pos0 + max(nx, ny) (mtmd `get_n_pos`).
 */
export function imageRopePositions(pos0: number, nx: number, ny: number): RopePositions {
  const n = nx * ny;
  const out = new Int32Array(4 * n); // [4, n]
  for (let i = 0; i < n; i++) {
    out[i] = pos0;
    out[n + i] = pos0 + Math.floor(i / nx);
    out[2 * n + i] = pos0 + (i % nx);
  }
  return out;
}

/** Rows off … off+n−1 of `positions` ([4, total]) as their own [4, n] block. */
export function sliceRopePositions(positions: RopePositions, off: number, n: number): RopePositions {
  const total = positions.length / 4;
  const out = new Int32Array(4 * n); // [4, n]
  for (let s = 0; s < 4; s++) out.set(positions.subarray(s * total + off, s * total + off + n), s * n);
  return out;
}
