/** Context: batches split by batchSize with logits only on the last piece, overflow, warmup that forgets itself. */
import { describe, expect, it } from 'vitest';
import { Context } from '../../../src/engine/context.js';
import { generate } from '../../../src/engine/generate.js';
import { DEFAULT_SAMPLING } from '../../../src/engine/sampler.js';
import { isLlmError } from '../../../src/errors.js';
import { BOS, createFakeTokenizer, createFakeTransformer, EOS } from './fake-model.js';

describe('Context', () => {
  it('splits a segment into batchSize pieces; only the last keeps logits', async () => {
    const t = createFakeTransformer({ contextLength: 128 });
    const ctx = new Context(t, { contextLength: 128, nSlots: 2, batchSize: 10 });
    await ctx.decode(
      [{ slot: 1, startPos: 0, tokens: Array.from({ length: 25 }, (_, i) => i), logits: 'last' }],
      'prefill',
    );
    expect(t.counters.calls).toEqual([
      [0, 10, 'none'],
      [10, 10, 'none'],
      [20, 5, 'last'],
    ]);
    expect(Array.from(t.cells[1].subarray(0, 25))).toEqual(Array.from({ length: 25 }, (_, i) => i));
    expect(ctx.timers.prefillTokens).toBe(25);
  });

  it('refuses positions past the context with context-overflow', async () => {
    const t = createFakeTransformer({ contextLength: 16 });
    const ctx = new Context(t, { contextLength: 16, nSlots: 1 });
    await expect(
      ctx.decode([{ slot: 0, startPos: 10, tokens: [1, 2, 3, 4, 5, 6, 7], logits: 'last' }], 'decode'),
    ).rejects.toSatisfy((e) => isLlmError(e, 'context-overflow'));
    const gen = generate(ctx, createFakeTokenizer(), {
      prompt: new Array(16).fill(65),
      cacheKey: 'k',
      sampling: { ...DEFAULT_SAMPLING, seed: 1 },
      maxTokens: 4,
      stop: [],
      eogIds: new Set(),
    });
    await expect(gen.next()).rejects.toSatisfy((e) => isLlmError(e, 'context-overflow'));
  });

  it('ends with finish_reason length when the context fills during generation', async () => {
    const t = createFakeTransformer({ contextLength: 12, script: () => 66 });
    const ctx = new Context(t, { contextLength: 12, nSlots: 1 });
    const gen = generate(ctx, createFakeTokenizer(), {
      prompt: [65, 65, 65, 65],
      cacheKey: 'k',
      sampling: { ...DEFAULT_SAMPLING, temperature: 0, seed: 1 },
      maxTokens: Infinity,
      stop: [],
      eogIds: new Set(),
    });
    let text = '';
    for (;;) {
      const s = await gen.next();
      if (s.done) {
        expect(s.value.finishReason).toBe('length');
        expect(s.value.tokens.length).toBe(8); // prompt + output = the 12 cells (as llama.cpp: n_past + 1 >= n_ctx ends it)
        break;
      }
      text += s.value;
    }
    expect(text).toBe('BBBBBBBB');
    expect(ctx.kv.slot(0).tokens.length).toBe(11); // the last token needs no cell: nothing comes after it
  });

  it('warmup decodes BOS+EOS, then forgets KV, cache and timers', async () => {
    const t = createFakeTransformer();
    const ctx = new Context(t, { contextLength: 64, nSlots: 2 });
    await ctx.warmup([BOS, EOS]);
    expect(t.counters.calls).toEqual([[0, 2, 'last']]);
    expect(ctx.kv.totalTokens()).toBe(0);
    expect(ctx.timers.prefillTokens).toBe(0);
    expect(ctx.cacheStats().lookups).toBe(0);
  });

  it('warmup refuses a backend whose logits are NaN or all zero', async () => {
    for (const bad of [NaN, 0]) {
      const t = createFakeTransformer();
      (t as { ops: unknown }).ops = { ...t.ops, name: 'webgpu' };
      t.readLogits = async () => new Float32Array(8).fill(bad);
      const ctx = new Context(t, { contextLength: 64, nSlots: 1 });
      await expect(ctx.warmup([BOS])).rejects.toSatisfy((e) => isLlmError(e, 'feature-missing'));
    }
  });

  it('non-finite or all-zero warmup logits on the CPU/WASM backends blame the model (gguf-invalid), not the backend', async () => {
    for (const name of ['cpu', 'wasm']) {
      for (const [bad, cause] of [
        [Infinity, /non-finite output/],
        [NaN, /non-finite output/],
        [0, /all-zero logits/],
      ] as const) {
        const t = createFakeTransformer();
        (t as { ops: unknown }).ops = { ...t.ops, name };
        t.readLogits = async () => new Float32Array(8).fill(bad);
        const ctx = new Context(t, { contextLength: 64, nSlots: 1 });
        await expect(ctx.warmup([BOS])).rejects.toSatisfy(
          (e) => isLlmError(e, 'gguf-invalid') && cause.test(e.message) && !/try another backend/.test(e.message),
        );
      }
    }
  });
});
