/**
 * Pipelines compiled asynchronously at warmup (Ops.preparePipelines): the warmup records a prompt step, a decode
 * step, argmax and top-k without running them, then builds the pipelines they use with
 * `createComputePipelineAsync`; greedy and seeded decoding afterwards compile nothing synchronously. Without the
 * warmup the first use still compiles synchronously and decodes the same tokens. Counted by spying on the device.
 */

import { afterAll, describe, expect, it } from 'vitest';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { Context } from '../../src/engine/context.js';
import { generate } from '../../src/engine/generate.js';
import { PromptCache } from '../../src/engine/prompt-cache.js';
import { DEFAULT_SAMPLING, type SamplingParams } from '../../src/engine/sampler.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import { loadTransformer } from '../../src/model/load.js';
import type { TransformerModel } from '../../src/model/transformer.js';
import { createTokenizer } from '../../src/tokenizer/index.js';
import type { Tokenizer } from '../../src/tokenizer/tokenizer.js';
import { destroyTestGpu, getTestDevice } from '../helpers/gpu.js';
import { sharedPath } from '../helpers/shared-path.js';

const MODEL = sharedPath('models', 'stories260K.gguf');
const KEY = PromptCache.keyString({ model: 'stories', template: '', tokenizer: '' });
const closers: (() => Promise<void> | void)[] = [];

/** A fresh device whose pipeline creations are counted. */
async function spiedDevice(): Promise<{ device: GPUDevice; counts: { sync: number; async: number } }> {
  const device = await getTestDevice(['shader-f16', 'subgroups']);
  const counts = { sync: 0, async: 0 };
  const sync = device.createComputePipeline.bind(device);
  const async = device.createComputePipelineAsync.bind(device);
  device.createComputePipeline = (d) => {
    counts.sync++;
    return sync(d);
  };
  device.createComputePipelineAsync = (d) => {
    counts.async++;
    return async(d);
  };
  return { device, counts };
}

async function load(device: GPUDevice): Promise<{ model: TransformerModel; tokenizer: Tokenizer }> {
  const source = await NodeFileSource.open(MODEL);
  closers.push(() => source.close());
  const gguf = await parseGguf(source);
  const model = await loadTransformer(gguf, source, await createWebGpuOps({ device }), { contextLength: 64 });
  closers.push(() => model.destroy());
  return { model, tokenizer: createTokenizer(gguf.metadata) };
}

async function tokens(ctx: Context, tokenizer: Tokenizer, sampling: SamplingParams): Promise<readonly number[]> {
  const prompt = tokenizer.encode('Once upon a time', { addSpecial: true, parseSpecial: false });
  const input = { prompt, cacheKey: KEY, sampling, maxTokens: 8, stop: [], eogIds: tokenizer.eogIds };
  const gen = generate(ctx, tokenizer, input);
  for (;;) {
    const step = await gen.next();
    if (step.done) return step.value.tokens;
  }
}

describe('WebGPU pipelines at warmup', () => {
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    destroyTestGpu();
  });

  const greedy: SamplingParams = { ...DEFAULT_SAMPLING, temperature: 0, seed: 1 };
  const seeded: SamplingParams = { ...DEFAULT_SAMPLING, temperature: 0.9, seed: 7 };

  it('warmup compiles them with createComputePipelineAsync; decoding then compiles nothing synchronously', async () => {
    const { device, counts } = await spiedDevice();
    const { model, tokenizer } = await load(device);
    const ctx = new Context(model, { contextLength: 64, nSlots: 1 });
    await ctx.warmup([1, 2]);
    expect(counts.async).toBeGreaterThan(5);
    expect(counts.sync).toBe(0);
    const a = await tokens(ctx, tokenizer, greedy);
    const b = await tokens(ctx, tokenizer, seeded);
    expect(counts.sync).toBe(0);

    // Without the warmup: compiled synchronously at first use, same tokens.
    const cold = await spiedDevice();
    const second = await load(cold.device);
    const coldCtx = new Context(second.model, { contextLength: 64, nSlots: 1 });
    expect(await tokens(coldCtx, second.tokenizer, greedy)).toEqual(a);
    expect(await tokens(coldCtx, second.tokenizer, seeded)).toEqual(b);
    expect(cold.counts.async).toBe(0);
    expect(cold.counts.sync).toBeGreaterThan(5);
  });
});
