/** The argument check every backend's `Ops.setRows` shares. */

import { LlmError } from '../errors.js';
import type { Activation } from './ops.js';

/** Throws `invalid-request` unless `rows` holds n rows of `out.cols` values and n fits `out`. */
export function checkRows(out: Activation, rows: Float32Array, n: number): void {
  if (!(Number.isInteger(n) && n >= 1 && n <= out.maxRows && rows.length >= n * out.cols)) {
    throw new LlmError(
      'invalid-request',
      `setting ${n} input rows of ${out.cols} values into ${out.label} [${out.maxRows}, ${out.cols}]: ` +
        `${rows.length} values given`,
      { details: { n, cols: out.cols, maxRows: out.maxRows, values: rows.length } },
    );
  }
}
