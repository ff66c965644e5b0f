/**
 * Several sequences per step on hybrid recurrent models (`Transformer.evalRows` with `Ops.recurrentRows`): each row of
 * a batched step reads and advances its own slot's conv window and DeltaNet / Mamba-2 / short-conv state. Four
 * sequences at different positions — two sharing a prompt, one a token further, one starting fresh in a slot whose
 * old state must read as zeros — decode together for a few steps; every row's logits and every slot's final state
 * equal those of the same sequence evaluated alone, token by token, on a second copy of the model.
 */

import { join } from 'node:path';
import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../../src/backend/cpu/cpu-ops.js';
import type { Ops } from '../../../src/backend/ops.js';
import { createWasmOps } from '../../../src/backend/wasm/index.js';
import { parseGguf } from '../../../src/gguf/parse.js';
import { NodeFileSource } from '../../../src/io/node-file-source.js';
import { maxAbsDiff } from '../../../src/model/conformance.js';
import { loadTransformer } from '../../../src/model/load.js';
import type { SequenceToken, Transformer } from '../../../src/model/model.js';
import { RECORDED_FIXTURE_DIR } from '../../helpers/shared-path.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

const FIXTURES = ['qwen35-q8_0-s1', 'lfm2-q8_0-s1', 'granitehybrid-q8_0-s1', 'nemotron_h-q8_0-s2', 'falcon-h1-q8_0-s1'];
const BACKENDS: Record<string, () => Promise<Ops>> = {
  cpu: async () => createCpuOps(),
  wasm: () => createWasmOps({ threads: 1 }),
};
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

describe('hybrid models decode several sequences per step', () => {
  for (const fixture of FIXTURES) {
    for (const [backend, makeOps] of Object.entries(BACKENDS)) {
      it(`${fixture} on ${backend}: each row equals its sequence alone`, async () => {
        const batched = await load(fixture, await makeOps(), 4);
        const alone = await load(fixture, await makeOps(), 1);
        try {
          const m = batched.model;
          expect(m.maxSequenceRows).toBe(4);
          const prompt = Int32Array.from({ length: 7 }, (_, i) => tokenOf(9, i)); // [7]
          // Slot 3 first holds another sequence: a row at position 0 must start from a zero state, not that one.
          await m.eval(Int32Array.of(11, 12, 13), 0, 3, { logits: 'none' });
          await m.eval(prompt, 0, 0, { logits: 'none' });
          m.copySlot(0, 1, prompt.length);
          m.copySlot(0, 2, prompt.length);
          await m.eval(Int32Array.of(tokenOf(2, 99)), prompt.length, 2, { logits: 'none' });
          // Each sequence: its tokens before the batched steps, then one token per step.
          const history = [[...prompt], [...prompt], [...prompt, tokenOf(2, 99)], [] as number[]];
          const rowLogits: Float32Array[][] = [[], [], [], []]; // [sequence][step] → [vocab]
          for (let step = 0; step < STEPS; step++) {
            const rows: SequenceToken[] = history.map((h, s) => ({ slot: s, pos: h.length, token: tokenOf(s, step) }));
            await m.evalRows(rows);
            for (let s = 0; s < 4; s++) {
              rowLogits[s].push(await m.readLogits(s));
              history[s].push(rows[s].token);
            }
          }
          for (let s = 0; s < 4; s++) {
            const a = alone.model;
            const h = history[s];
            const before = h.length - STEPS;
            if (before > 0) await a.eval(Int32Array.from(h.slice(0, before)), 0, 0, { logits: 'none' });
            for (let step = 0; step < STEPS; step++) {
              const pos = before + step;
              await a.eval(Int32Array.of(h[pos]), pos, 0, { logits: 'last' });
              const ref = await a.readLogits();
              const d = maxAbsDiff(rowLogits[s][step], ref);
              expect(d, `sequence ${s}, step ${step}`).toBeLessThanOrEqual(backend === 'cpu' ? 0 : 1e-4);
            }
            const state = (await m.readState(s))!;
            expect(maxAbsDiff(state, (await a.readState(0))!), `state of slot ${s}`).toBeLessThanOrEqual(
              backend === 'cpu' ? 0 : 1e-4,
            );
          }
        } finally {
          await batched.close();
          await alone.close();
        }
      });
    }
  }
});
