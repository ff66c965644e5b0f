/**
 * Pipelined greedy decode on WebGPU (engine/pipelined-decode.ts): the argmax is written on the device into the token
 * input, and step N+1 is submitted before token N is read back. Two copies of stories260K (lavapipe), one decoding
 * pipelined and one not, must give the same tokens, text, finish reason, KV record and prompt-cache reuse under
 * every stop condition (maxTokens, a stop string, an end-of-generation token, the end of the context with and
 * without a context shift, an abort mid-stream); seeded sampling, n = 2 and logprobs take the unpipelined loop and
 * match too. A counter test pins the pipelined step at 1 submission and 0 host token writes.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import type { WebGpuOps } from '../../src/backend/webgpu/webgpu-ops.js';
import { Context } from '../../src/engine/context.js';
import { type GenerationInput, type GenerationResult, generate, generateChoices } from '../../src/engine/generate.js';
import { PromptCache } from '../../src/engine/prompt-cache.js';
import { DEFAULT_SAMPLING, type SamplingParams } from '../../src/engine/sampler.js';
import { isLlmError } from '../../src/errors.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import { loadTransformer } from '../../src/model/load.js';
import type { TransformerModel } from '../../src/model/transformer.js';
import { createTokenizer } from '../../src/tokenizer/index.js';
import type { Tokenizer } from '../../src/tokenizer/tokenizer.js';
import { destroyTestGpu, getTestGpu } from '../helpers/gpu.js';
import { sharedPath } from '../helpers/shared-path.js';

const MODEL = sharedPath('models', 'stories260K.gguf');
const CONTEXT = 96;
const KEY = PromptCache.keyString({ model: 'stories', template: '', tokenizer: '' });
const GREEDY: SamplingParams = { ...DEFAULT_SAMPLING, temperature: 0, seed: 1 };

interface Side {
  readonly ops: WebGpuOps;
  readonly model: TransformerModel;
  ctx: Context;
}

let tokenizer: Tokenizer;
let prompt: number[];
const sides: Record<'on' | 'off', Side> = {} as Record<'on' | 'off', Side>;
const closers: (() => Promise<void> | void)[] = [];

async function load(pipelined: boolean, kernels: 'auto' | 'hardware' = 'auto'): Promise<Side> {
  const source = await NodeFileSource.open(MODEL);
  closers.push(() => source.close());
  const gguf = await parseGguf(source);
  tokenizer ??= createTokenizer(gguf.metadata);
  const ops = (await createWebGpuOps({ gpu: await getTestGpu(), kernels })) as WebGpuOps;
  const model = await loadTransformer(gguf, source, ops, { contextLength: CONTEXT, nSlots: 2 });
  closers.push(() => model.destroy());
  return { ops, model, ctx: new Context(model, { contextLength: CONTEXT, nSlots: 2, pipelinedDecode: pipelined }) };
}

/** Runs one generation to its end (or its error); returns the result and every streamed delta. */
async function run(side: Side, input: Partial<GenerationInput>, abortAfter = Infinity): Promise<unknown> {
  const ac = new AbortController();
  let seen = 0;
  const full: GenerationInput = {
    prompt,
    cacheKey: KEY,
    sampling: GREEDY,
    maxTokens: 24,
    stop: [],
    eogIds: tokenizer.eogIds,
    ...input,
    signal: ac.signal,
    onToken: () => {
      if (++seen >= abortAfter) ac.abort();
    },
  };
  const deltas: string[] = [];
  const gen = generate(side.ctx, tokenizer, full);
  try {
    for (;;) {
      const step = await gen.next();
      if (step.done) {
        const r: GenerationResult = step.value;
        return { deltas, text: r.text, tokens: r.tokens, finish: r.finishReason, cached: r.cachedTokens };
      }
      deltas.push(step.value);
    }
  } catch (e) {
    return { deltas, error: isLlmError(e) ? e.code : String(e) };
  }
}

/** The same generation on both sides: equal outcomes and equal KV records. */
async function both(input: Partial<GenerationInput>, abortAfter = Infinity): Promise<unknown> {
  const decoded = (side: Side) => side.ctx.timers.decodeTokens;
  const [on0, off0] = [decoded(sides.on), decoded(sides.off)];
  const on = await run(sides.on, input, abortAfter);
  const off = await run(sides.off, input, abortAfter);
  expect(on).toEqual(off);
  expect(sides.on.ctx.kv.all().map((s) => s.tokens)).toEqual(sides.off.ctx.kv.all().map((s) => s.tokens));
  expect(decoded(sides.on) - on0).toBe(decoded(sides.off) - off0); // a discarded step is not counted
  return off;
}

describe('pipelined greedy decode on WebGPU', () => {
  beforeAll(async () => {
    sides.on = await load(true);
    sides.off = await load(false);
    prompt = tokenizer.encode('Once upon a time, there was a little', { addSpecial: true, parseSpecial: false });
  });
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    destroyTestGpu();
  });

  it('is on where the backend chains tokens, and off when asked', () => {
    expect(sides.on.ctx.pipelinedDecode).toBe(true);
    expect(sides.off.ctx.pipelinedDecode).toBe(false);
  });

  it('pipelined steps: 1 submission and no host token write each; the unpipelined loop writes every token', async () => {
    const counts = async (side: Side) => {
      side.ctx.cache.clear(true);
      side.ctx.resetTimers();
      const before = { ...side.ops.stats };
      const r = (await run(side, { maxTokens: 12 })) as { tokens: number[] };
      expect(r.tokens).toHaveLength(12);
      return {
        decodeTokens: side.ctx.timers.decodeTokens,
        submissions: side.ops.stats.submissions - before.submissions,
        tokenWrites: side.ops.stats.tokenWrites - before.tokenWrites,
      };
    };
    // The prompt is one host write and, with the first argmax, one submission; then 11 decode steps.
    expect(await counts(sides.on)).toEqual({ decodeTokens: 11, submissions: 12, tokenWrites: 1 });
    const off = await counts(sides.off); // its forward pass may be submitted apart from its argmax (a yield between)
    expect(off.tokenWrites).toBe(12);
    expect(off.decodeTokens).toBe(11);
    expect(off.submissions).toBeGreaterThanOrEqual(12);
  });

  it('greedy: same tokens, text and KV record at maxTokens 1, 2, 5 and 40', async () => {
    for (const maxTokens of [1, 2, 5, 40]) await both({ maxTokens });
  });

  it('greedy: a stop string and an end-of-generation token end both at the same token', async () => {
    const ref = (await run(sides.off, { maxTokens: 20 })) as { text: string; tokens: number[] };
    const stop = ref.text
      .slice(Math.floor(ref.text.length / 2))
      .trim()
      .split(' ')[0]!;
    const r1 = (await both({ stop: [stop], maxTokens: 40 })) as { finish: string };
    expect(r1.finish).toBe('stop');
    const eog = new Set([...tokenizer.eogIds, ref.tokens[6]!]);
    const r2 = (await both({ eogIds: eog, maxTokens: 40 })) as { tokens: number[]; finish: string };
    expect(r2).toMatchObject({ finish: 'stop', tokens: ref.tokens.slice(0, ref.tokens.indexOf(ref.tokens[6]!)) });
  });

  it('greedy: the end of the context, cut or shifted, and a prompt-cache hit after it', async () => {
    const long = { maxTokens: Infinity };
    expect(await both(long)).toMatchObject({ finish: 'length' });
    expect(await both({ ...long, contextShift: { nKeep: 4 }, maxTokens: CONTEXT + 10 })).toMatchObject({
      finish: 'length',
    });
    const again = (await both({ maxTokens: 6 })) as { cached: number };
    expect(again.cached).toBeGreaterThan(0);
  });

  it('an abort mid-stream leaves the same KV record; the next request reuses it alike', async () => {
    for (const after of [1, 3, 8]) {
      expect(await both({ maxTokens: 30 }, after)).toMatchObject({ error: 'aborted' });
      await both({ maxTokens: 10 });
    }
  });

  it('the hardware kernel set (fused GEMVs, tiled attention) decodes the same tokens pipelined', async () => {
    const hw = { on: await load(true, 'hardware'), off: await load(false, 'hardware') };
    const on = await run(hw.on, { maxTokens: 30 });
    expect(on).toEqual(await run(hw.off, { maxTokens: 30 }));
    expect((on as { tokens: number[] }).tokens).toHaveLength(30);
  });

  it('seeded sampling, logprobs and n = 2 (unpipelined loop) give the same output either way', async () => {
    const seeded: SamplingParams = { ...DEFAULT_SAMPLING, temperature: 0.9, topK: 40, seed: 42 };
    await both({ sampling: seeded, maxTokens: 16 });
    await both({ logprobs: 2, maxTokens: 8 });
    const choices = async (side: Side) => {
      const gen = generateChoices(
        side.ctx,
        tokenizer,
        { prompt, cacheKey: KEY, sampling: seeded, maxTokens: 8, stop: [], eogIds: tokenizer.eogIds },
        2,
      );
      for (;;) {
        const step = await gen.next();
        if (step.done) return step.value.map((r) => r.tokens);
      }
    };
    expect(await choices(sides.on)).toEqual(await choices(sides.off));
  });
});
