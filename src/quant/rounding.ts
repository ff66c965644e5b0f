/**
 * Scalar rounding helpers that reproduce ggml's C float semantics in JS: `nearest_int` (the 1.5·2^23 trick, ties to
 * even), `roundf` (ties away from zero), and the truncating float → int8/uint8 casts the reference quantizers use.
 * All f32 arithmetic elsewhere in src/quant mirrors C with `Math.fround` after every operation.
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
