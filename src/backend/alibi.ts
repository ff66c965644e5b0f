/**
 * ALiBi (attention with linear biases; jina-bert-v2): head h adds slope_h · −|pos_q − pos_k| to each attention score
 * after scaling, with ggml's slopes (`ggml_compute_forward_soft_max_f32`): n = 2^⌊log2 nHeads⌋,
 * m0 = 2^(−maxBias / n), m1 = 2^(−maxBias / 2 / n), slope_h = m0^(h+1) for h < n, else m1^(2(h−n)+1).
 */

/** ggml's ALiBi constants for `nHeads` heads and `maxBias` (`f_max_alibi_bias`). */
export function alibiConstants(nHeads: number, maxBias: number): { m0: number; m1: number; nLog2: number } {
  const nLog2 = 2 ** Math.floor(Math.log2(nHeads));
  return {
    m0: Math.fround(2 ** (-maxBias / nLog2)),
    m1: Math.fround(2 ** (-(maxBias / 2) / nLog2)),
    nLog2,
  };
}

/** Slope of head h ([nHeads] in order), as f32 values. */
export function alibiSlopes(nHeads: number, maxBias: number): Float32Array {
  const { m0, m1, nLog2 } = alibiConstants(nHeads, maxBias);
  return Float32Array.from({ length: nHeads }, (_, h) => (h < nLog2 ? m0 ** (h + 1) : m1 ** (2 * (h - nLog2) + 1)));
}
