/**
 * Numeric comparison helpers for tests: max |Δ|, NMSE (as ggml test-backend-ops), argmax and top-1 margin. One
 * implementation, shared with `webgguf conform` (src/model/conformance.ts); this file adds array-level helpers.
 */

import { argmaxOf, maxAbsDiff, nmse } from '../../src/model/conformance.js';

export { argmaxOf, maxAbsDiff };

/** Summary of two equally long vectors: max |Δ|, NMSE (b is the reference) and whether their argmax agrees. */
export interface Comparison {
  readonly maxAbs: number;
  readonly nmse: number;
  readonly argmaxAgree: boolean;
}

/** Compares `actual` with `expected`; throws on a length mismatch (a shape bug, not a tolerance question). */
export function compare(actual: ArrayLike<number>, expected: ArrayLike<number>): Comparison {
  if (actual.length !== expected.length) {
    throw new Error(`compare: lengths differ (${actual.length} vs ${expected.length})`);
  }
  return {
    maxAbs: maxAbsDiff(actual, expected),
    nmse: nmse(actual, expected),
    argmaxAgree: argmaxOf(actual) === argmaxOf(expected),
  };
}

/** Argmax agreement of two row-major [rows, cols] matrices: the number of rows whose argmax is equal. */
export function argmaxAgreement(actual: ArrayLike<number>, expected: ArrayLike<number>, cols: number): number {
  const rowArgmax = (m: ArrayLike<number>, r: number): number => {
    let best = r * cols;
    for (let i = best + 1; i < (r + 1) * cols; i++) if (m[i] > m[best]) best = i;
    return best - r * cols;
  };
  let agree = 0;
  const rows = Math.floor(expected.length / cols);
  for (let r = 0; r < rows; r++) if (rowArgmax(actual, r) === rowArgmax(expected, r)) agree++;
  return agree;
}
