/**
 * Pipelined greedy decode of models with recurrent state on WebGPU (engine/pipelined-decode.ts): the conv / SSM /
 * delta-rule state advances in place on the device, step N+1 chained before token N is read back. Per hybrid fixture
 * (lfm2, qwen35, granitehybrid) and kernel set, a pipelined and an unpipelined copy give the same greedy tokens under
 * maxTokens, an end-of-generation token and an abort mid-stream; after each, a follow-up turn resumes from the slot's
 * own state (every recorded token reused) with the logits of a cold run of the whole conversation.
 */

import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { Context } from '../../src/engine/context.js';
import { type GenerationInput, generate } from '../../src/engine/generate.js';
import { PromptCache } from '../../src/engine/prompt-cache.js';
import { DEFAULT_SAMPLING } from '../../src/engine/sampler.js';
import { isLlmError } from '../../src/errors.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import { maxAbsDiff } from '../../src/model/conformance.js';
import { loadTransformer } from '../../src/model/load.js';
import { createTokenizer } from '../../src/tokenizer/index.js';
import type { Tokenizer } from '../../src/tokenizer/tokenizer.js';
import { destroyTestGpu, getTestDevice } from '../helpers/gpu.js';
import { RECORDED_FIXTURE_DIR } from '../helpers/shared-path.js';

const CONTEXT = 96;
const KEY = PromptCache.keyString({ model: 'hybrid', template: '', tokenizer: '' });
const PROMPT = Array.from({ length: 11 }, (_, i) => 5 + ((i * 37) % 400));
const closers: (() => Promise<void> | void)[] = [];

interface Outcome {
  readonly tokens?: readonly number[];
  readonly finish?: string;
  readonly cached?: number;
  readonly error?: string;
}

async function load(fixture: string, kernels: 'auto' | 'hardware', pipelined: boolean) {
  const source = await NodeFileSource.open(join(RECORDED_FIXTURE_DIR, fixture));
  closers.push(() => source.close());
  const gguf = await parseGguf(source);
  const device = await getTestDevice(['shader-f16', 'subgroups']);
  const ops = await createWebGpuOps({ device, kernels, preferF16: kernels === 'hardware' });
  const model = await loadTransformer(gguf, source, ops, { contextLength: CONTEXT, nSlots: 2 });
  closers.push(() => model.destroy());
  const ctx = new Context(model, { contextLength: CONTEXT, nSlots: 2, pipelinedDecode: pipelined });
  return { ctx, tokenizer: createTokenizer(gguf.metadata) };
}

async function run(
  ctx: Context,
  tokenizer: Tokenizer,
  input: Partial<GenerationInput>,
  abortAfter = Infinity,
): Promise<Outcome> {
  const ac = new AbortController();
  let seen = 0;
  const gen = generate(ctx, tokenizer, {
    prompt: PROMPT,
    cacheKey: KEY,
    sampling: { ...DEFAULT_SAMPLING, temperature: 0, seed: 1 },
    maxTokens: 12,
    stop: [],
    eogIds: new Set<number>(),
    ...input,
    signal: ac.signal,
    onToken: () => {
      if (++seen >= abortAfter) ac.abort();
    },
  });
  try {
    for (;;) {
      const step = await gen.next();
      if (step.done)
        return { tokens: step.value.tokens, finish: step.value.finishReason, cached: step.value.cachedTokens };
    }
  } catch (e) {
    return { error: isLlmError(e) ? e.code : String(e) };
  }
}

/** Logits of the last prompt token after a one-token generation of `prompt` (the prompt cache as it stands). */
async function promptLogits(ctx: Context, tokenizer: Tokenizer, prompt: number[]) {
  const r = await run(ctx, tokenizer, { prompt, maxTokens: 1 });
  return { cached: r.cached ?? -1, logits: await ctx.transformer.readLogits() };
}

describe('pipelined greedy decode with recurrent state on WebGPU', () => {
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    destroyTestGpu();
  });

  for (const fixture of ['lfm2-q8_0-s1.gguf', 'qwen35-q8_0-s1.gguf', 'granitehybrid-q8_0-s1.gguf']) {
    for (const kernels of ['auto', 'hardware'] as const) {
      it(`${fixture} (${kernels} kernels): same tokens; a follow-up turn after a stop or an abort equals a cold run`, async () => {
        const tol = kernels === 'hardware' ? 2e-2 : 1e-3;
        const on = await load(fixture, kernels, true);
        const off = await load(fixture, kernels, false);
        expect(on.ctx.pipelinedDecode).toBe(true);
        const ref = await run(off.ctx, off.tokenizer, { maxTokens: 12 });
        expect(ref.tokens).toHaveLength(12);
        expect(await run(on.ctx, on.tokenizer, { maxTokens: 12 })).toEqual(ref);
        // Ends: an end-of-generation token (its speculative step is kept), an abort after 3 tokens.
        const eog = new Set([ref.tokens![7]!]);
        const ends: [Partial<GenerationInput>, number][] = [
          [{ eogIds: eog }, Infinity],
          [{}, 3],
        ];
        for (const [input, abortAfter] of ends) {
          on.ctx.cache.clear();
          off.ctx.cache.clear();
          const a = await run(on.ctx, on.tokenizer, input, abortAfter);
          expect(a).toEqual(await run(off.ctx, off.tokenizer, input, abortAfter));
          // The slot's record (prompt and every taken token) and its state describe the same tokens: a follow-up
          // turn reuses all of them and matches a cold run of the whole conversation.
          const record = on.ctx.kv
            .all()
            .reduce((x, s) => (s.tokens.length > x.length ? [...s.tokens] : x), [] as number[]);
          expect(record.length).toBeGreaterThan(PROMPT.length);
          const next = [...record, 17, 230, 41];
          const warm = await promptLogits(on.ctx, on.tokenizer, next);
          expect(warm.cached).toBe(record.length);
          off.ctx.cache.clear();
          const cold = await promptLogits(off.ctx, off.tokenizer, next);
          expect(cold.cached).toBe(0);
          expect(maxAbsDiff(warm.logits, cold.logits)).toBeLessThanOrEqual(tol);
        }
      });
    }
  }
});
