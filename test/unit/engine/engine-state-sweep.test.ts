/**
 * Engine state sweep (issues 15, 16, 17, 20): every family (dense, sliding-window, hybrid recurrent, MoE, M-RoPE)
 * × the state the engine keeps between requests — a multi-turn follow-up, a shared system prompt, aborts inside
 * prefill and decode, n = 3 choices then a turn on choice 2, max_tokens 0/1, stop strings, concurrent requests, a
 * context shift then a turn, quantized KV with reuse, LRU eviction under a small budget, persisted save/restore —
 * each answer checked against a cold run of the same whole token sequence (text equal, logprobs within float noise).
 * Backends: wasm by default (the cpu reference is ~5× slower), SWEEP_ENGINE_BACKENDS=cpu,wasm to choose; SWEEP_ENGINE_FULL=1 runs both (the exhaustive variant: more abort
 * points and every KV type).
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KvType } from '../../../src/backend/kv-type.js';
import { isLlmError } from '../../../src/errors.js';
import { memoryPromptCacheStore } from '../../../src/io/prompt-cache-store.js';
import {
  checked,
  complete,
  coldRun,
  type EnginePair,
  expectSame,
  idsOf,
  openPair,
  SWEEP_MODELS,
  sweepIds,
  abortOnEval,
  SWEEP_BACKENDS,
  SWEEP_FULL,
} from '../../helpers/engine-sweep.js';

const BASE = { ubatchSize: 8, batchSize: 8, threads: 1 } as const;
/** One or two models per family by default; every model with SWEEP_ENGINE_FULL=1. */
const QUICK = new Set(['llama3', 'gemma2', 'gemma3', 'qwen35', 'falcon-h1', 'qwen3moe', 'qwen2vl']);
const MODELS = SWEEP_FULL ? SWEEP_MODELS : SWEEP_MODELS.filter((m) => QUICK.has(m.name));

for (const backend of SWEEP_BACKENDS) {
  for (const model of MODELS) {
    describe(`engine state sweep: ${model.name} (${model.family}) on ${backend}`, () => {
      let pair: EnginePair;
      let v = 0;
      const ids = (from: number, n: number): number[] => sweepIds(from, n, v);
      beforeAll(async () => {
        pair = await openPair(model, { backend, ...BASE });
        v = pair.vocab;
      });
      afterAll(() => pair.close());

      it('multi-turn: turn 2 reuses turn 1 and equals a cold run', async () => {
        const p1 = ids(1, 21);
        const t1 = await checked(pair, p1, 'turn 1');
        const p2 = [...p1, ...(await idsOf(pair.warm, t1.text)), ...ids(2, 5)];
        const t2 = await checked(pair, p2, 'turn 2');
        expect(t2.cached).toBeGreaterThan(0);
        const p3 = [...p2, ...(await idsOf(pair.warm, t2.text)), ...ids(3, 3)];
        await checked(pair, p3, 'turn 3');
      });

      it('two conversations sharing a system prompt', async () => {
        const system = ids(4, 18);
        await checked(pair, [...system, ...ids(5, 4)], 'conversation a');
        await checked(pair, [...system, ...ids(6, 4)], 'conversation b');
        const c = await checked(pair, [...system, ...ids(7, 4)], 'conversation c');
        expect(c.cached).toBeGreaterThan(0);
      });

      it('aborts inside prefill and decode, then the same and a different request', async () => {
        const prompt = ids(8, 30); // 4 prefill pieces of 8, then decode steps
        const points = SWEEP_FULL ? [1, 2, 3, 4, 5, 6, 8] : [2, 4, 6];
        for (const at of points) {
          await checked(pair, ids(9, 12), `before abort ${at}`); // a state in the other slot
          const ac = new AbortController();
          const restore = abortOnEval(pair, ac, at);
          try {
            await complete(pair.warm, prompt, { signal: ac.signal, max_tokens: 6 });
          } catch (e) {
            expect(isLlmError(e, 'aborted'), String(e)).toBe(true);
          } finally {
            restore();
          }
          await checked(pair, prompt, `same after abort ${at}`);
          await checked(pair, [...prompt.slice(0, 20), ...ids(10 + at, 6)], `different after abort ${at}`);
        }
      });

      it('n = 3 choices then a follow-up turn on choice 2', async () => {
        const prompt = ids(11, 16);
        const r = await pair.warm.completions.create({ prompt, n: 3, temperature: 0.9, seed: 7, max_tokens: 5 });
        const p2 = [...prompt, ...(await idsOf(pair.warm, r.choices[1]!.text)), ...ids(12, 4)];
        await checked(pair, p2, 'turn on choice 2');
        const p3 = [...prompt, ...(await idsOf(pair.warm, r.choices[2]!.text)), ...ids(13, 4)];
        await checked(pair, p3, 'turn on choice 3');
      });

      it('max_tokens 0 (rejected, no state left behind) and 1, then a follow-up', async () => {
        const prompt = ids(14, 13);
        const zero = await complete(pair.warm, prompt, { max_tokens: 0 }).catch((e: unknown) => e);
        expect(isLlmError(zero, 'invalid-request') && zero.details?.['field']).toBe('max_tokens');
        await checked(pair, prompt, 'max_tokens 1', { max_tokens: 1 });
        await checked(pair, [...prompt, ...ids(15, 3)], 'after max_tokens 1');
      });

      it('a stop string hit inside the cached boundary, then a follow-up', async () => {
        const prompt = ids(16, 14);
        const full = await complete(pair.warm, prompt, { max_tokens: 8 });
        const stop = full.text.slice(2, 4);
        if (stop.length === 0) return;
        const cut = await checked(pair, prompt, 'stopped', { max_tokens: 8, stop: [stop] });
        expect(cut.finish).toBe('stop');
        const p2 = [...prompt, ...(await idsOf(pair.warm, cut.text)), ...ids(17, 4)];
        await checked(pair, p2, 'after the stop', { stop: [stop] });
      });

      it('concurrent requests mixing turns, choices, aborts and max_tokens 1', async () => {
        const system = ids(18, 12);
        const pA = [...system, ...ids(19, 5)];
        const pB = [...system, ...ids(20, 5)];
        const ac = new AbortController();
        const aborted = complete(pair.warm, ids(21, 20), { signal: ac.signal }).catch((e: unknown) => e);
        const results = Promise.all([
          complete(pair.warm, pA),
          complete(pair.warm, pB, { max_tokens: 1 }),
          pair.warm.completions.create({ prompt: pB, n: 3, temperature: 0.7, seed: 3, max_tokens: 4 }),
          complete(pair.warm, [...pA, ...ids(22, 3)]),
        ]);
        ac.abort();
        const [a, b, , d] = await results;
        await aborted;
        expectSame(a, await coldRun(pair, pA), 'concurrent a');
        expectSame(b, await coldRun(pair, pB, { max_tokens: 1 }), 'concurrent b');
        expectSame(d, await coldRun(pair, [...pA, ...ids(22, 3)]), 'concurrent d');
        await checked(pair, [...pB, ...ids(23, 4)], 'after the concurrent requests');
      });
    });

    describe(`engine state sweep, own engines: ${model.name} (${model.family}) on ${backend}`, () => {
      for (const kvType of [undefined, 'q8_0', ...(SWEEP_FULL ? ['q4_0'] : [])] as (KvType | undefined)[])
        it(`a context shift mid-generation, then follow-up turns (KV ${kvType ?? 'default'})`, async () => {
          const shiftOpts = { backend, ...BASE, contextLength: 48, contextShift: true, slots: 1 };
          const pair = await openPair(model, kvType ? { ...shiftOpts, kvType } : shiftOpts);
          try {
            const ids = (from: number, n: number): number[] => sweepIds(from, n, pair.vocab);
            const prompt = ids(24, 36);
            const long = await complete(pair.warm, prompt, { max_tokens: 24 });
            // llama.cpp shifts neither a recurrent state nor M-RoPE positions: those stop at the context end.
            if (model.family === 'hybrid' || model.family === 'mrope') expect(long).toMatchObject({ finish: 'length' });
            else expect(long.logprobs.length).toBeGreaterThan(12); // generation ran past the context end
            expect(long.logprobs.length).toBe(model.family === 'hybrid' || model.family === 'mrope' ? 12 : 24);
            await checked(pair, prompt, 'the prompt again after a shift');
            await checked(pair, [...prompt.slice(0, 30), ...ids(25, 4)], 'a prefix of it after a shift');
          } finally {
            await pair.close();
          }
        });

      const kvTypes: readonly KvType[] = SWEEP_FULL ? ['q8_0', 'q4_0', 'f16'] : ['q8_0'];
      for (const kvType of kvTypes) {
        it(`kvType ${kvType} with cache reuse`, async () => {
          let pair: EnginePair;
          try {
            pair = await openPair(model, { backend, ...BASE, kvType });
          } catch (e) {
            expect(isLlmError(e), String(e)).toBe(true); // a type this backend cannot store: a clear error
            return;
          }
          try {
            const ids = (from: number, n: number): number[] => sweepIds(from, n, pair.vocab);
            const p1 = ids(26, 19);
            const t1 = await checked(pair, p1, `${kvType} turn 1`);
            const p2 = [...p1, ...(await idsOf(pair.warm, t1.text)), ...ids(27, 4)];
            const t2 = await checked(pair, p2, `${kvType} turn 2`);
            expect(t2.cached).toBeGreaterThan(0);
            await checked(pair, [...p1.slice(0, 12), ...ids(28, 4)], `${kvType} shared prefix`);
          } finally {
            await pair.close();
          }
        });
      }

      it('LRU eviction under a small cache budget', async () => {
        const pair = await openPair(model, { backend, ...BASE, slots: 3, cacheTokenBudget: 40 });
        try {
          const ids = (from: number, n: number): number[] => sweepIds(from, n, pair.vocab);
          const prompts = [30, 31, 32, 33].map((s) => ids(s, 18));
          for (const [i, p] of prompts.entries()) await checked(pair, p, `distinct prompt ${i}`);
          const stats = (await pair.warm.stats()).promptCache;
          expect(stats.evictions).toBeGreaterThan(0);
          await checked(pair, [...prompts[0]!, ...ids(34, 3)], 'the evicted first prompt');
          await checked(pair, [...prompts[3]!, ...ids(35, 3)], 'the most recent prompt');
        } finally {
          await pair.close();
        }
      });

      it('persisted cache: save, restore in a new engine, then a turn', async () => {
        const store = memoryPromptCacheStore();
        const pair = await openPair(model, { backend, ...BASE, persistedCache: { store, minTokens: 4 } });
        const ids = (from: number, n: number): number[] => sweepIds(from, n, pair.vocab);
        const p1 = ids(36, 20);
        let again: EnginePair | null = null;
        try {
          await checked(pair, p1, 'before save');
          await pair.warm.saveCache();
          again = await openPair(model, { backend, ...BASE, persistedCache: { store, minTokens: 4 } });
          await again.warm.restoreCache();
          const t = await checked(again, [...p1, ...ids(37, 4)], 'after restore');
          if (model.family !== 'hybrid') expect(t.cached).toBeGreaterThan(0);
        } finally {
          await pair.close();
          await again?.close();
        }
      });
    });
  }
}
