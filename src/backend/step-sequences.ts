/**
 * How a host backend (cpu, wasm) runs a recurrent op over a step: one call for a step of one sequence, or, when the
 * step holds several sequences (`StepBatch.sequences`: n choices decoding together), one call per row, that row alone
 * at its own slot, its activations located at the row (the others' rows untouched).
 */

import { LlmError } from '../errors.js';
import type { HostView } from './delta-net.js';
import type { Activation, StepBatch } from './ops.js';

/**
 * Calls `run(view, slot, fresh, rows)` once per sequence of `step`: with `view` locating each of `rows`' activations at
 * the sequence's first row (weights and other operands unchanged), `fresh` when the sequence starts there (its old
 * state reads as zeros) and `rows` the sequence's row count in the step.
 */
export function forEachSequence(
  step: StepBatch,
  view: HostView,
  n: number,
  perRow: readonly Activation[],
  run: (view: HostView, slot: number, fresh: boolean, rows: number) => void,
): void {
  const seqs = step.sequences;
  if (!seqs) {
    run(view, step.slot, step.startPos === 0, n);
    return;
  }
  if (seqs.length !== n) {
    throw new LlmError('invalid-request', `recurrent op over ${n} rows of a step of ${seqs.length} sequences`, {
      details: { rows: n, sequences: seqs.length },
    });
  }
  for (let r = 0; r < n; r++) {
    const rowView: HostView = (t) => {
      const [data, at] = view(t);
      return perRow.includes(t as Activation) ? [data, at + r * (t as Activation).cols] : [data, at];
    };
    run(rowView, seqs[r].slot, seqs[r].pos === 0, 1);
  }
}
