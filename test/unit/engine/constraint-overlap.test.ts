/**
 * Constrained decoding overlaps the grammar with the forward pass: each step asks for the logit row (on WebGPU that
 * submits the step) before the grammar computes its token mask, and the mask still applies — for one choice and for
 * n choices decoding together.
 */
import { describe, expect, it } from 'vitest';
import { Context } from '../../../src/engine/context.js';
import { generateChoices, type TokenConstraint } from '../../../src/engine/generate.js';
import { DEFAULT_SAMPLING } from '../../../src/engine/sampler.js';
import { createFakeTokenizer, createFakeTransformer, EOS } from './fake-model.js';

/** Allows only 'a' (97) and 'b' (98); logs its mask calls into `events`. */
function abConstraint(events: string[]): TokenConstraint {
  const mask = new Int32Array(9);
  mask[97 >> 5] |= (1 << (97 & 31)) | (1 << (98 & 31));
  return {
    nextMask: () => {
      events.push('mask');
      return mask;
    },
    accept: () => true,
    isTerminated: () => false,
  };
}

describe('grammar mask during the forward pass', () => {
  for (const n of [1, 3]) {
    it(`reads the logits before computing the mask, and the mask holds (n = ${n})`, async () => {
      const t = createFakeTransformer({ nSlots: 4 });
      const events: string[] = [];
      const readLogits = t.readLogits.bind(t);
      t.readLogits = (row?: number) => {
        events.push('read');
        return readLogits(row);
      };
      const ctx = new Context(t, { contextLength: 64, nSlots: 4 });
      const gen = generateChoices(
        ctx,
        createFakeTokenizer(),
        {
          prompt: [1, 2, 3],
          cacheKey: 'k',
          sampling: { ...DEFAULT_SAMPLING, seed: 3 },
          maxTokens: 6,
          stop: [],
          eogIds: new Set([EOS]),
        },
        n,
        Array.from({ length: n }, () => abConstraint(events)),
      );
      let step = await gen.next();
      while (!step.done) step = await gen.next();
      for (const r of step.value) {
        expect(r.tokens).toHaveLength(6);
        expect(r.tokens.every((id) => id === 97 || id === 98)).toBe(true);
      }
      // Every mask is computed after its row was asked for: reads and masks alternate, the read first.
      expect(events).toHaveLength(2 * 6 * n);
      for (let i = 0; i < events.length; i += 2) expect(events.slice(i, i + 2)).toEqual(['read', 'mask']);
    });
  }
});
