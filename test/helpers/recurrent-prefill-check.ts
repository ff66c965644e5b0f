/**
 * Prefill of the recurrent layers (DeltaNet, Mamba-2) on one backend: a prompt longer than the conv window and than a
 * step (ubatch) gives the logits of the same tokens fed one at a time (the decode path), and a second turn resumed
 * from a snapshot gives those of one cold run. Returns the cold run's logits for cross-backend checks.
 */

import { join } from 'node:path';
import { expect } from 'vitest';
import type { Ops } from '../../src/backend/ops.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import { maxAbsDiff } from '../../src/model/conformance.js';
import { loadTransformer } from '../../src/model/load.js';
import { RECORDED_FIXTURE_DIR } from './shared-path.js';

/** Recorded hybrid fixtures with a scan: (what it covers, file). */
export const RECURRENT_PREFILL_FIXTURES: readonly (readonly [string, string])[] = [
  ['qwen35 (gated DeltaNet)', 'qwen35-q8_0-s1.gguf'],
  ['granitehybrid (Mamba-2)', 'granitehybrid-q8_0-s1.gguf'],
  ['falcon-h1 (Mamba-2 beside attention)', 'falcon-h1-q8_0-s1.gguf'],
];

const LENGTH = 70; // > the 4-tap conv windows, > two steps of UBATCH
const UBATCH = 32;
const TURN = 45; // the first turn's end: not a step boundary
const tokens = Int32Array.from({ length: LENGTH }, (_, i) => 3 + ((i * 53 + 11) % 500)); // [70]

/**
 * Logits [LENGTH, vocab] of one cold prefill of `fixture` on `ops`, after the per-token and snapshot checks against
 * it on the same backend (max |Δ| ≤ `tol`).
 */
export async function prefillChecks(ops: Ops, fixture: string, tol: number): Promise<Float32Array> {
  const source = await NodeFileSource.open(join(RECORDED_FIXTURE_DIR, fixture));
  const model = await loadTransformer(await parseGguf(source), source, ops, {
    contextLength: LENGTH + 8,
    ubatchSize: UBATCH,
    nSlots: 2,
  });
  try {
    const vocab = model.config.vocabSize;
    const whole = (await model.eval(tokens, 0, 0, { logits: 'all' }))!; // [LENGTH, vocab], three steps
    // One token per step (the decode path) in slot 1.
    for (let i = 0; i < LENGTH; i += 1) {
      const row = (await model.eval(tokens.subarray(i, i + 1), i, 1, { logits: 'all' }))!; // [1, vocab]
      if (i % 9 === 0 || i === LENGTH - 1) {
        expect(maxAbsDiff(row, whole.subarray(i * vocab, (i + 1) * vocab)), `token ${i}`).toBeLessThanOrEqual(tol);
      }
    }
    // Turn one, a snapshot, a detour of other tokens after it, the snapshot back, turn two: as one cold run.
    await model.eval(tokens.subarray(0, TURN), 0, 0, { logits: 'none' });
    const snap = (await model.readState(0))!;
    await model.eval(tokens.subarray(5, 5 + LENGTH - TURN), TURN, 0, { logits: 'none' });
    model.writeState(0, snap);
    const second = (await model.eval(tokens.subarray(TURN), TURN, 0, { logits: 'all' }))!; // [LENGTH − TURN, vocab]
    expect(maxAbsDiff(second, whole.subarray(TURN * vocab))).toBeLessThanOrEqual(tol);
    return whole;
  } finally {
    model.destroy();
    await source.close();
  }
}
