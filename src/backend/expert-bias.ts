/**
 * `Ops.addExpertBias` on a host backend: each (token, slot) row of a gather matmul's output gets the bias row of the
 * expert it was routed to (gpt-oss's `ffn_{gate,up,down}_exps.bias`).
 */

import { LlmError } from '../errors.js';
import type { HostView } from './delta-net.js';
import type { Activation, Weight } from './ops.js';

/**
 * A backend's native row add over its `view` array: values o … o+len += b … b+len (indices into that array), e.g. the
 * WASM backend's SIMD `add_rows` (src/backend/wasm/expert-bias-rows.ts).
 */
export type AddRow = (o: number, b: number, len: number) => void;

/**
 * out[t·nUsed + k] += bias row ids[t, k] (bias: one vector of rows of out.cols values) for t < n, each row through
 * `addRow` when given (the same f32 sums), else a plain-TS loop.
 */
export function hostAddExpertBias(
  view: HostView,
  out: Activation,
  bias: Weight,
  ids: Activation,
  n: number,
  addRow: AddRow | null = null,
): void {
  const cols = out.cols;
  const nUsed = ids.cols;
  const nExperts = (bias.rowLength * bias.nRows) / cols;
  if (!Number.isInteger(nExperts) || n * nUsed > out.maxRows) {
    throw new LlmError(
      'invalid-request',
      `addExpertBias ${bias.name}: ${bias.rowLength * bias.nRows} values are not whole rows of ${out.label} [${out.maxRows}, ${cols}] for ${n}×${nUsed} slots`,
    );
  }
  const [[od, oAt], [bd, bAt], [id, iAt]] = [view(out), view(bias), view(ids)];
  for (let r = 0; r < n * nUsed; r++) {
    const e = id[iAt + r];
    if (!(e >= 0 && e < nExperts)) continue; // ids come from moeRoute: always in range
    const o = oAt + r * cols;
    const b = bAt + (e | 0) * cols; // an int index: V8's typed-array loop below runs ≈ 1.5× faster than with a double
    if (addRow && od === bd) addRow(o, b, cols);
    else for (let c = 0; c < cols; c++) od[o + c] += bd[b + c];
  }
}
