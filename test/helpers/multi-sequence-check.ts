/**
 * The check behind `Transformer.evalRows` on every backend: sequences decoded together, one row each in a batched
 * step, give the logits (and argmax / top-k) that each sequence gets alone, one token per `eval` — with rows in any
 * order of slots and at different positions. Each backend's test file calls `describeMultiSequence`.
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Ops } from '../../src/backend/ops.js';
import type { KvType } from '../../src/backend/kv-type.js';
import { isLlmError } from '../../src/errors.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { MemoryByteSource } from '../../src/io/byte-source.js';
import { loadTransformer } from '../../src/model/load.js';
import type { SequenceToken, Transformer } from '../../src/model/model.js';
import { maxAbsDiff } from './compare.js';
import { sharedPath } from './shared-path.js';

async function load(rel: string, ops: Ops, nSlots: number, kvType?: KvType): Promise<Transformer> {
  const source = new MemoryByteSource(readFileSync(sharedPath('models', rel)), rel);
  return loadTransformer(await parseGguf(source), source, ops, { contextLength: 32, ubatchSize: 8, nSlots, kvType });
}

/** Prompt shared by every sequence; sequence 3 has one more token (so rows sit at different positions). */
const PROMPT = [1, 403, 407, 261, 378];
/** Per step, the token of each slot 0…3 (distinct, so each sequence goes its own way). */
const STEPS = [
  [261, 300, 331, 402],
  [263, 310, 350, 420],
  [280, 320, 301, 430],
];
/** Row order of each step: slots in a different order each time (a row/slot mix-up changes the logits). */
const ORDERS = [
  [0, 1, 2, 3],
  [2, 0, 3, 1],
  [3, 2, 1, 0],
];

/**
 * `fixtures`: model files under ../shared/models; `tolerance`: max |Δ| of a logit between batched and alone;
 * `kvType`: the KV cache's element type (both runs).
 */
export function describeMultiSequence(
  name: string,
  makeOps: () => Ops | Promise<Ops>,
  fixtures: readonly string[],
  tolerance: number,
  kvType?: KvType,
): void {
  describe(`${name}: n sequences in one step${kvType ? ` (${kvType} KV)` : ''}`, () => {
    for (const rel of fixtures) {
      it(`equal each sequence run alone (${rel})`, { timeout: 120_000 }, async () => {
        const batched = await load(rel, await makeOps(), 4, kvType);
        expect(batched.maxSequenceRows).toBe(4);
        await batched.eval(Int32Array.from(PROMPT), 0, 0);
        for (const s of [1, 2]) batched.copySlot(0, s, PROMPT.length);
        batched.copySlot(0, 3, PROMPT.length);
        await batched.eval(Int32Array.of(290), PROMPT.length, 3); // slot 3 is one token ahead
        const start = (slot: number) => PROMPT.length + (slot === 3 ? 1 : 0);
        const got: Float32Array[][] = [[], [], [], []]; // [slot][step] logits
        const argmaxes: number[][] = [[], [], [], []];
        const tops: number[][][] = [[], [], [], []];
        for (let step = 0; step < STEPS.length; step++) {
          const rows: SequenceToken[] = ORDERS[step].map((slot) => ({
            slot,
            pos: start(slot) + step,
            token: STEPS[step][slot],
          }));
          await batched.evalRows(rows);
          for (let i = 0; i < rows.length; i++) {
            const slot = rows[i].slot;
            got[slot].push(await batched.readLogits(i));
            argmaxes[slot].push(await batched.argmax(i));
            tops[slot].push(Array.from((await batched.topK(3, i)).ids));
          }
        }
        batched.destroy();

        const alone = await load(rel, await makeOps(), 1, kvType);
        expect(alone.maxSequenceRows).toBe(0);
        for (let slot = 0; slot < 4; slot++) {
          await alone.eval(Int32Array.from(slot === 3 ? [...PROMPT, 290] : PROMPT), 0, 0);
          for (let step = 0; step < STEPS.length; step++) {
            await alone.eval(Int32Array.of(STEPS[step][slot]), start(slot) + step, 0);
            const want = await alone.readLogits();
            expect(maxAbsDiff(got[slot][step], want), `slot ${slot} step ${step}`).toBeLessThan(tolerance);
            expect(argmaxes[slot][step]).toBe(await alone.argmax());
            expect(tops[slot][step][0]).toBe((await alone.topK(3)).ids[0]);
          }
        }
        alone.destroy();
      });
    }

    it('refuses a repeated slot, too many rows and a row that was not evaluated', async () => {
      const model = await load(fixtures[0], await makeOps(), 2);
      const row = (slot: number): SequenceToken => ({ slot, pos: 0, token: 1 });
      await expect(model.evalRows([row(0), row(0)])).rejects.toSatisfy((e) => isLlmError(e, 'invalid-request'));
      await expect(model.evalRows([row(0), row(1), row(1)])).rejects.toSatisfy((e) => isLlmError(e, 'invalid-request'));
      await expect(model.evalRows([{ slot: 0, pos: 32, token: 1 }])).rejects.toSatisfy((e) =>
        isLlmError(e, 'context-overflow'),
      );
      await model.evalRows([row(0), row(1)]);
      await expect(model.readLogits(2)).rejects.toSatisfy((e) => isLlmError(e, 'invalid-request'));
      model.destroy();
    });
  });
}
