/**
 * `n` choices on hybrid recurrent models through the engine, now decoded together (one `evalRows` step per token, each
 * row on its own slot's recurrent state): choice i equals a one-choice request seeded with seed + i (which resumes
 * from the prompt's cached snapshot), on the CPU reference and WASM. An abort in the middle of the prompt's prefill
 * leaves nothing behind: the same request afterwards equals a cold engine's answer.
 */

import { join } from 'node:path';
import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/api/create-engine.js';
import type { LocalEngine } from '../../../src/api/local-engine.js';
import { isLlmError } from '../../../src/errors.js';
import { RECORDED_FIXTURE_DIR } from '../../helpers/shared-path.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

const open = async (fixture: string, backend: 'cpu' | 'wasm', batchSize?: number) =>
  (await createEngine({
    model: join(RECORDED_FIXTURE_DIR, `${fixture}.gguf`),
    backend,
    threads: 1,
    contextLength: 64,
    slots: 4,
    ...(batchSize && { batchSize }),
  })) as LocalEngine;

const ask = { prompt: 'The data: 12, 7, 9 and', temperature: 1, top_k: 0, top_p: 1, min_p: 0, seed: 42, max_tokens: 8 };

/** Counts the transformer's batched steps. */
function countRows(engine: LocalEngine): { steps: number } {
  const t = engine.context.transformer;
  const counter = { steps: 0 };
  const evalRows = t.evalRows.bind(t);
  t.evalRows = (rows, signal) => {
    counter.steps++;
    return evalRows(rows, signal);
  };
  return counter;
}

describe('n choices on hybrid models', () => {
  for (const fixture of ['qwen35-q8_0-s1', 'lfm2-q8_0-s1', 'granitehybrid-q8_0-s1']) {
    for (const backend of ['cpu', 'wasm'] as const) {
      it(`${fixture} on ${backend}: decoded together, choice i = one choice seeded seed + i`, async () => {
        const engine = await open(fixture, backend);
        try {
          const batched = countRows(engine);
          const four = await engine.completions.create({ ...ask, n: 4 });
          expect(batched.steps).toBeGreaterThan(0);
          const texts = four.choices.map((c) => c.text);
          expect(new Set(texts).size).toBeGreaterThan(1); // distinct choices
          let reused = 0;
          for (let i = 0; i < 4; i++) {
            const one = await engine.completions.create({ ...ask, seed: 42 + i });
            expect(one.choices[0].text, `choice ${i}`).toBe(texts[i]);
            reused = Math.max(reused, one.usage.prompt_tokens_details?.cached_tokens ?? 0);
          }
          expect(reused).toBeGreaterThan(0); // later ones resume from a snapshot of the prompt the batched run left
        } finally {
          await engine.unload();
        }
      });
    }
  }

  it('qwen35 on wasm: an abort mid-prefill leaves no half-updated state', async () => {
    const cold = await open('qwen35-q8_0-s1', 'wasm', 4);
    const expected = (await cold.completions.create({ ...ask, n: 4 })).choices.map((c) => c.text);
    await cold.unload();
    const engine = await open('qwen35-q8_0-s1', 'wasm', 4); // prefill in pieces of 4 tokens
    try {
      const t = engine.context.transformer;
      const ac = new AbortController();
      const evalOnce = t.eval.bind(t);
      let pieces = 0;
      t.eval = async (tokens, startPos, slot, options) => {
        const out = await evalOnce(tokens, startPos, slot, options);
        if (tokens.length > 1 && ++pieces === 1) ac.abort(); // after the first piece of the prompt
        return out;
      };
      const e = await engine.completions.create({ ...ask, n: 4, signal: ac.signal }).catch((x: unknown) => x);
      expect(isLlmError(e, 'aborted')).toBe(true);
      t.eval = evalOnce;
      await engine.settled();
      expect(pieces).toBe(1);
      const again = await engine.completions.create({ ...ask, n: 4 });
      expect(again.usage.prompt_tokens).toBeGreaterThan(4); // the abort came with the prompt half evaluated
      expect(again.choices.map((c) => c.text)).toEqual(expected);
    } finally {
      await engine.unload();
    }
  });
});
