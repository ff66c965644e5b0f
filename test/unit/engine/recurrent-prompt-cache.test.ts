/**
 * The prompt cache of a model with recurrent layers (lfm2's short convolutions, qwen35's DeltaNet; recorded
 * fixtures, CPU reference):
 * a state cannot be cut back to a prefix, so a match lands only where a state is known — the slot's own state at
 * its end (a conversation's next turn) or a snapshot (a shared system prompt) — and every served answer equals a
 * cold run of the whole prompt, token for token and logprob for logprob. A state being written is never served.
 */

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCpuOps } from '../../../src/backend/cpu/cpu-ops.js';
import { Context } from '../../../src/engine/context.js';
import { generate, type GenerationResult } from '../../../src/engine/generate.js';
import { KvCache } from '../../../src/engine/kv-cache.js';
import { PersistedPromptCache } from '../../../src/engine/persisted-cache.js';
import { PromptCache } from '../../../src/engine/prompt-cache.js';
import { normalizeSamplingOptions } from '../../../src/engine/sampling-options.js';
import { parseGguf } from '../../../src/gguf/parse.js';
import { memoryPromptCacheStore } from '../../../src/io/prompt-cache-store.js';
import { NodeFileSource } from '../../../src/io/node-file-source.js';
import { loadTransformer } from '../../../src/model/load.js';
import type { Transformer } from '../../../src/model/model.js';
import { createTokenizer } from '../../../src/tokenizer/index.js';
import type { Tokenizer } from '../../../src/tokenizer/tokenizer.js';
import { RECORDED_FIXTURE_DIR } from '../../helpers/shared-path.js';

const CTX = 96;
const ids = (from: number, n: number): number[] => Array.from({ length: n }, (_, i) => 3 + ((from + i * 7) % 500));

for (const fixture of [
  'lfm2-q8_0-s1',
  'qwen35-q8_0-s1',
  'granitehybrid-q8_0-s1',
  'nemotron_h-q8_0-s2',
  'falcon-h1-q8_0-s1',
]) {
  const arch = fixture.replace(/-q8_0-s\d$/, '');
  describe(`prompt cache with recurrent state (${arch})`, () => {
    let transformer: Transformer;
    let tokenizer: Tokenizer;
    let close: () => Promise<void>;
    beforeAll(async () => {
      const source = await NodeFileSource.open(join(RECORDED_FIXTURE_DIR, `${fixture}.gguf`));
      const gguf = await parseGguf(source);
      tokenizer = createTokenizer(gguf.metadata);
      transformer = await loadTransformer(gguf, source, createCpuOps(), { contextLength: CTX, nSlots: 2 });
      close = () => source.close();
    });
    afterAll(async () => {
      transformer.destroy();
      await close();
    });

    const run = async (
      ctx: Context,
      prompt: readonly number[],
      maxTokens = 4,
      stateBoundaries?: readonly number[],
    ): Promise<GenerationResult> => {
      const gen = generate(ctx, tokenizer, {
        ...(stateBoundaries ? { stateBoundaries } : {}),
        prompt,
        cacheKey: 'k',
        sampling: normalizeSamplingOptions({ temperature: 0 }, tokenizer.vocabSize).sampling,
        maxTokens,
        stop: [],
        eogIds: new Set(),
        logprobs: 3,
      });
      for (;;) {
        const step = await gen.next();
        if (step.done) return step.value;
      }
    };
    /** The same prompt on a fresh context (slot 0 from position 0): what a served answer must equal. */
    const cold = (prompt: readonly number[]): Promise<GenerationResult> =>
      run(new Context(transformer, { contextLength: CTX, nSlots: 2 }), prompt);
    const same = (a: GenerationResult, b: GenerationResult): void => {
      expect(a.tokens).toEqual(b.tokens);
      expect(a.logprobs).toEqual(b.logprobs);
    };

    it("a conversation's next turn resumes from the slot's state and equals a cold run", async () => {
      const ctx = new Context(transformer, { contextLength: CTX, nSlots: 2 });
      const p1 = ids(1, 20);
      const t1 = await run(ctx, p1);
      const p2 = [...p1, ...t1.tokens, ...ids(9, 6)];
      const t2 = await run(ctx, p2);
      expect(t2.cachedTokens).toBe(p1.length + t1.tokens.length - 1); // all that was evaluated
      same(t2, await cold(p2));
    });

    it('conversations sharing a system prompt share it through a snapshot, equal to cold runs', async () => {
      const ctx = new Context(transformer, { contextLength: CTX, nSlots: 2 });
      const system = ids(2, 12);
      const a = await run(ctx, [...system, ...ids(40, 5)]);
      expect(a.cachedTokens).toBe(0);
      // b shares only the system prompt with a: no state is known there yet, so b stops its prefill there to keep one.
      const b = await run(ctx, [...system, ...ids(80, 5)]);
      expect(b.cachedTokens).toBe(0);
      const cPrompt = [...system, ...ids(120, 5)];
      const c = await run(ctx, cPrompt);
      expect(c.cachedTokens).toBe(system.length);
      expect(ctx.cacheStats()).toMatchObject({ snapshotRestores: 1 });
      same(c, await cold(cPrompt));
    });

    it("with the chat layer's system-prompt boundary, the second conversation already shares it", async () => {
      const ctx = new Context(transformer, { contextLength: CTX, nSlots: 2 });
      const system = ids(3, 12);
      await run(ctx, [...system, ...ids(40, 5)], 4, [system.length]);
      const bPrompt = [...system, ...ids(80, 5)];
      const b = await run(ctx, bPrompt, 4, [system.length]);
      expect(b.cachedTokens).toBe(system.length);
      same(b, await cold(bPrompt));
    });

    it('the persisted prompt cache keeps nothing for it (KV without the state could never be served)', async () => {
      const ctx = new Context(transformer, { contextLength: CTX, nSlots: 1 });
      const p = ids(6, 12);
      await run(ctx, p);
      const persisted = new PersistedPromptCache(transformer, ctx.cache, arch, { store: memoryPromptCacheStore() });
      expect(await persisted.save('k', p)).toBeNull();
      expect(await persisted.saveAll()).toBe(0);
    });

    it('an identical prompt again never reuses a state past the prompt, and equals a cold run', async () => {
      const ctx = new Context(transformer, { contextLength: CTX, nSlots: 1 });
      const p = ids(5, 15);
      await run(ctx, p);
      const again = await run(ctx, p); // the slot's state is after p + output; the snapshot after all of p
      expect(again.cachedTokens).toBe(0);
      same(again, await cold(p));
    });
  });
}

describe('prompt cache state bookkeeping', () => {
  const states = () => {
    const written: [number, number][] = [];
    return {
      written,
      access: {
        read: async (slot: number) => Float32Array.of(slot),
        write: (slot: number, s: Float32Array) => written.push([slot, s[0]!]),
      },
    };
  };

  it('a state being written (an aborted prefill) is never served', () => {
    const kv = new KvCache(1, 64);
    const cache = new PromptCache(kv, () => {}, undefined, states().access);
    const lease = cache.acquire('k', [1, 2, 3, 4]);
    cache.append(lease, [1, 2, 3, 4]);
    cache.release(lease);
    const next = cache.acquire('k', [1, 2, 3, 4, 5, 6]);
    expect(next.reused).toBe(4);
    cache.beginWrite(next.slot); // prefill of [5, 6] starts … and is aborted: no append
    cache.release(next);
    expect(cache.acquire('k', [1, 2, 3, 4, 5, 6, 7]).reused).toBe(0);
  });

  it('snapshots restore into the leased slot and are evicted LRU beyond their budget', async () => {
    const kv = new KvCache(1, 64);
    const { access, written } = states();
    const cache = new PromptCache(kv, () => {}, undefined, access, 1);
    let lease = cache.acquire('k', [1, 2, 3]);
    cache.append(lease, [1, 2, 3]);
    await cache.snapshot(lease);
    cache.append(lease, [9]);
    cache.release(lease);
    lease = cache.acquire('k', [1, 2, 3, 7, 7]);
    expect(lease.reused).toBe(3);
    expect(written).toEqual([[0, 0]]);
    cache.append(lease, [7, 7]);
    await cache.snapshot(lease); // the budget holds one: [1, 2, 3] goes
    cache.release(lease);
    expect(cache.stats()).toMatchObject({ stateSnapshots: 2, snapshotRestores: 1 });
    expect(cache.acquire('k', [1, 2, 3, 8]).reused).toBe(0);
  });
});
