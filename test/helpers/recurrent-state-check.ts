/**
 * A backend's recurrent state (lfm2's short-convolution state) through the model: a snapshot read after a prefix and
 * written back after more tokens resumes exactly there; a slot copy carries the state. Checked against one
 * uninterrupted run, with `tol` max |Δ| (0 where the backend is deterministic per row).
 */

import { join } from 'node:path';
import { expect } from 'vitest';
import type { Ops } from '../../src/backend/ops.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import { maxAbsDiff } from '../../src/model/conformance.js';
import { loadTransformer } from '../../src/model/load.js';
import { RECORDED_FIXTURE_DIR } from './shared-path.js';

/** Runs the checks on `ops` with a recorded hybrid fixture (lfm2's by default). */
export async function checkRecurrentState(ops: Ops, tol: number, fixture = 'lfm2-q8_0-s1.gguf'): Promise<void> {
  const source = await NodeFileSource.open(join(RECORDED_FIXTURE_DIR, fixture));
  const model = await loadTransformer(await parseGguf(source), source, ops, { contextLength: 32, nSlots: 2 });
  try {
    const vocab = model.config.vocabSize;
    const tokens = Int32Array.from({ length: 20 }, (_, i) => 5 + ((i * 37) % 400)); // [20]
    const whole = (await model.eval(tokens, 0, 0, { logits: 'all' }))!; // [20, vocab]
    // Prefix, snapshot, a detour of other tokens, restore, then the rest.
    await model.eval(tokens.subarray(0, 8), 0, 0, { logits: 'none' });
    const snap = (await model.readState(0))!;
    await model.eval(Int32Array.from([9, 9, 9, 9, 9, 9]), 8, 0, { logits: 'none' });
    model.writeState(0, snap);
    const rest = (await model.eval(tokens.subarray(8), 8, 0, { logits: 'all' }))!; // [12, vocab]
    expect(maxAbsDiff(rest, whole.subarray(8 * vocab))).toBeLessThanOrEqual(tol);
    // A copy of the slot (KV and state) continues like the original.
    model.copySlot(0, 1, 20);
    const next = Int32Array.of(17);
    const a = (await model.eval(next, 20, 0, { logits: 'all' }))!;
    const b = (await model.eval(next, 20, 1, { logits: 'all' }))!;
    expect(maxAbsDiff(a, b)).toBeLessThanOrEqual(tol);
    // Without the restore the detour shows: the check can fail.
    await model.eval(Int32Array.from([9, 9, 9]), 8, 1, { logits: 'none' });
    const detoured = (await model.eval(tokens.subarray(11), 11, 1, { logits: 'all' }))!;
    expect(maxAbsDiff(detoured, whole.subarray(11 * vocab))).toBeGreaterThan(1e-3);
  } finally {
    model.destroy();
    await source.close();
  }
}
