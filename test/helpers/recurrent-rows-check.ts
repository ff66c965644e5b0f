/**
 * The check behind several sequences per step on hybrid recurrent models (`Transformer.evalRows` with
 * `Ops.recurrentRows`): each row of a batched step reads and advances its own slot's conv window and DeltaNet /
 * Mamba-2 / short-conv state. `nSeq` sequences at different positions — sharing a prompt, one a token further, one
 * starting fresh at position 0 in a slot whose old state must read as zeros — decode together for a few steps;
 * every row's logits and every slot's final state equal those of the same sequence evaluated alone, token by token,
 * on a second copy of the model. Each backend's test file calls `describeRecurrentRows`.
 */

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Ops } from '../../src/backend/ops.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import { maxAbsDiff } from '../../src/model/conformance.js';
import { loadTransformer } from '../../src/model/load.js';
import type { SequenceToken, Transformer } from '../../src/model/model.js';
import { RECORDED_FIXTURE_DIR } from './shared-path.js';

const STEPS = 4;

/** Token `i` of sequence `s` (distinct per sequence, so their states diverge). */
const tokenOf = (s: number, i: number): number => 3 + ((s * 131 + i * 37) % 200);

async function load(
  fixture: string,
  ops: Ops,
  nSlots: number,
): Promise<{ model: Transformer; close: () => Promise<void> }> {
  const source = await NodeFileSource.open(join(RECORDED_FIXTURE_DIR, `${fixture}.gguf`));
  const model = await loadTransformer(await parseGguf(source), source, ops, { contextLength: 32, nSlots });
  return {
    model,
    close: async () => {
      model.destroy();
      await source.close();
    },
  };
}

/**
 * `fixtures`: recorded fixture ids (test/fixtures/models); `tolerance`: max |Δ| of a logit or state value between
 * batched and alone; `nSeq` (≥ 4): sequences decoded together.
 */
export function describeRecurrentRows(
  name: string,
  makeOps: () => Ops | Promise<Ops>,
  fixtures: readonly string[],
  tolerance: number,
  nSeq = 4,
): void {
  describe(`${name}: hybrid models decode ${nSeq} sequences per step`, () => {
    for (const fixture of fixtures) {
      it(`${fixture}: each row equals its sequence alone`, { timeout: 120_000 }, async () => {
        const batched = await load(fixture, await makeOps(), nSeq);
        const alone = await load(fixture, await makeOps(), 1);
        try {
          const m = batched.model;
          expect(m.maxSequenceRows).toBe(nSeq);
          const prompt = Int32Array.from({ length: 7 }, (_, i) => tokenOf(9, i)); // [7]
          // Slot 3 first holds another sequence: a row at position 0 must start from a zero state, not that one.
          await m.eval(Int32Array.of(11, 12, 13), 0, 3, { logits: 'none' });
          await m.eval(prompt, 0, 0, { logits: 'none' });
          for (let s = 1; s < nSeq; s++) if (s !== 3) m.copySlot(0, s, prompt.length);
          await m.eval(Int32Array.of(tokenOf(2, 99)), prompt.length, 2, { logits: 'none' });
          // Each sequence: its tokens before the batched steps, then one token per step.
          const history = Array.from({ length: nSeq }, (_, s) =>
            s === 2 ? [...prompt, tokenOf(2, 99)] : s === 3 ? ([] as number[]) : [...prompt],
          );
          const rowLogits: Float32Array[][] = history.map(() => []); // [sequence][step] → [vocab]
          for (let step = 0; step < STEPS; step++) {
            const rows: SequenceToken[] = history.map((h, s) => ({ slot: s, pos: h.length, token: tokenOf(s, step) }));
            await m.evalRows(rows);
            for (let s = 0; s < nSeq; s++) {
              rowLogits[s].push(await m.readLogits(s));
              history[s].push(rows[s].token);
            }
          }
          for (let s = 0; s < nSeq; s++) {
            const a = alone.model;
            const h = history[s];
            const before = h.length - STEPS;
            if (before > 0) await a.eval(Int32Array.from(h.slice(0, before)), 0, 0, { logits: 'none' });
            for (let step = 0; step < STEPS; step++) {
              const pos = before + step;
              await a.eval(Int32Array.of(h[pos]), pos, 0, { logits: 'last' });
              const d = maxAbsDiff(rowLogits[s][step], await a.readLogits());
              expect(d, `sequence ${s}, step ${step}`).toBeLessThanOrEqual(tolerance);
            }
            const state = (await m.readState(s))!;
            const d = maxAbsDiff(state, (await a.readState(0))!);
            expect(d, `state of slot ${s}`).toBeLessThanOrEqual(tolerance);
          }
        } finally {
          await batched.close();
          await alone.close();
        }
      });
    }
  });
}
