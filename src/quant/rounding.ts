/**
 * Scalar helpers that reproduce ggml's C float semantics in JS: `nearest_int` (the 1.5·2^23 trick, ties to even),
 * `roundf` (ties away from zero), the truncating float → int8/uint8 casts, and the signed abs-max scan the reference
 * quantizers start from. All f32 arithmetic elsewhere in src/quant mirrors C with `Math.fround` after every operation.
 */

const fround = Math.fround;

/** ggml `nearest_int`: round an f32 to the nearest integer, ties to even (valid for |x| ≤ 4194303). */
export function nearestInt(x: number): number {
  return fround(x + 12582912) - 12582912;
}

/** C `roundf`: round half away from zero. */
export function roundHalfAway(x: number): number {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

/** C `(int8_t)x` for a float `x` whose truncation fits an int32: truncate, then wrap to 8 bits signed. */
export function truncToInt8(x: number): number {
  return (Math.trunc(x) << 24) >> 24;
}

/** C `(uint8_t)x` for a float `x` whose truncation fits an int32: truncate, then wrap to 8 bits unsigned. */
export function truncToUint8(x: number): number {
  return Math.trunc(x) & 0xff;
}

/** Wraps an integer to int8 (C assignment to `int8_t`). */
export function toInt8(n: number): number {
  return (n << 24) >> 24;
}

/**
 * The element of largest magnitude in `x[offset … offset + n)`, with its sign: ggml's `amax`/`max` scan at the start of
 * `quantize_row_q4_0_ref`, `make_qx_quants`, `quantize_row_iq4_nl_impl` … The first wins on ties; NaNs are skipped;
 * 0 when every element is 0. Its absolute value is the scan's `amax`.
 */
export function signedAbsMax(x: Float32Array, offset: number, n: number): number {
  let amax = 0;
  let max = 0;
  for (let i = 0; i < n; i++) {
    const v = x[offset + i]!;
    const av = Math.abs(v);
    if (av > amax) {
      amax = av;
      max = v;
    }
  }
  return max;
}
