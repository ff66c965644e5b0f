/**
 * The engine on a real model (stories260K, llama, F32) with the reference CPU backend and the WASM backend:
 * greedy output equals llama.cpp's, seeded sampling is identical across runs and backends, the prompt cache
 * reuses KV exactly (same tokens as a cold run), and 100 aborted streams leave the backend's buffer count and the
 * KV state unchanged (counted through a wrapping Ops proxy).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Ops } from '../../../src/backend/ops.js';
import { createChatMlFormatter } from '../../../src/api/chat-formatter.js';
import { createEngine } from '../../../src/api/create-engine.js';
import type { Engine } from '../../../src/api/engine.js';
import { createEngineFromParts, type LocalEngine } from '../../../src/api/local-engine.js';
import { createCpuOps } from '../../../src/backend/cpu/cpu-ops.js';
import { isLlmError } from '../../../src/errors.js';
import { parseGguf } from '../../../src/gguf/parse.js';
import { NodeFileSource } from '../../../src/io/node-file-source.js';
import { loadTransformer } from '../../../src/model/load.js';
import { createTokenizer } from '../../../src/tokenizer/index.js';
import { sharedPath } from '../../helpers/shared-path.js';

const MODEL = sharedPath('models', 'stories260K.gguf');
const REF = JSON.parse(readFileSync(sharedPath('models', 'stories260K.reference.json'), 'utf8')) as {
  prompt: string;
  greedy_kv_f32: { tokens: number[]; text: string };
};

/** Wraps an Ops so that every allocation and release is counted. */
function countingOps(inner: Ops): {
  ops: Ops;
  counts: { weights: number; activations: number; kvCaches: number; destroyed: number };
} {
  const counts = { weights: 0, activations: 0, kvCaches: 0, destroyed: 0 };
  const ops = new Proxy(inner, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        if (prop === 'uploadWeight') counts.weights++;
        if (prop === 'createActivation') counts.activations++;
        if (prop === 'createKvCache') counts.kvCaches++;
        if (prop === 'destroy') counts.destroyed++;
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { ops, counts };
}

async function engineOnCountingOps(): Promise<{
  engine: LocalEngine;
  counts: ReturnType<typeof countingOps>['counts'];
}> {
  const source = await NodeFileSource.open(MODEL);
  const gguf = await parseGguf(source);
  const { ops, counts } = countingOps(createCpuOps());
  const transformer = await loadTransformer(gguf, source, ops, { contextLength: 256, nSlots: 2, ubatchSize: 64 });
  const tokenizer = createTokenizer(gguf.metadata);
  const engine = (await createEngineFromParts({
    transformer,
    tokenizer,
    chat: createChatMlFormatter(tokenizer),
    modelIdentity: 'name:stories260K',
    backend: { name: 'cpu', description: ops.description, reason: 'test' },
    contextLength: 256,
    slots: 2,
    onUnload: () => source.close(),
  })) as LocalEngine;
  return { engine, counts };
}

describe('stories260K on the CPU reference backend', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({ model: MODEL, backend: 'cpu', contextLength: 256 });
  });
  afterAll(() => engine.unload());

  it('reports the backend and why', () => {
    expect(engine.info.backend).toMatchObject({ name: 'cpu', reason: 'requested' });
    expect(engine.info.model.arch).toBe('llama');
    expect(engine.info.contextLength).toBe(256);
  });

  it('greedy 30 tokens equal llama.cpp (whole and streamed)', async () => {
    const r = await engine.completions.create({ prompt: REF.prompt, temperature: 0, max_tokens: 30 });
    expect(r.choices[0].text).toBe(REF.greedy_kv_f32.text);
    expect(r.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 30 });
    const s = await engine.completions.create({ prompt: REF.prompt, temperature: 0, max_tokens: 30, stream: true });
    let text = '';
    for await (const c of s) text += c.choices[0].text;
    expect(text).toBe(REF.greedy_kv_f32.text);
  });

  it('a cached prefix gives exactly the tokens of a cold run', async () => {
    const prompt = `${REF.prompt}, there was a little girl named Lily.`;
    const warm = await engine.completions.create({ prompt, temperature: 0.8, seed: 7, max_tokens: 20 });
    expect(warm.usage.prompt_tokens_details.cached_tokens).toBeGreaterThan(4);
    const cold = await createEngine({ model: MODEL, backend: 'cpu', contextLength: 256, warmup: false });
    const fresh = await cold.completions.create({ prompt, temperature: 0.8, seed: 7, max_tokens: 20 });
    expect(fresh.usage.prompt_tokens_details.cached_tokens).toBe(0);
    expect(warm.choices[0].text).toBe(fresh.choices[0].text);
    await cold.unload();
  });

  it('two prompts sharing a prefix share its KV (slot copy) and still match a cold run', async () => {
    const shared = 'Once upon a time, there was a big red ball.';
    const warm = await createEngine({ model: MODEL, backend: 'cpu', contextLength: 256, warmup: false });
    const cold = await createEngine({ model: MODEL, backend: 'cpu', contextLength: 256, warmup: false });
    try {
      const a = await warm.completions.create({ prompt: `${shared} Tom`, temperature: 0, max_tokens: 6 });
      const b = await warm.completions.create({ prompt: `${shared} Sue`, temperature: 0, max_tokens: 6 });
      expect((await warm.stats()).promptCache.copies).toBe(1);
      expect(b.usage.prompt_tokens_details.cached_tokens).toBeGreaterThan(10);
      // The first prompt's KV survived the copy: asking it again reuses all but its last token.
      const a2 = await warm.completions.create({ prompt: `${shared} Tom`, temperature: 0, max_tokens: 6 });
      expect(a2.usage.prompt_tokens_details.cached_tokens).toBe(a.usage.prompt_tokens - 1);
      expect(a2.choices[0].text).toBe(a.choices[0].text);
      expect(
        (await cold.completions.create({ prompt: `${shared} Sue`, temperature: 0, max_tokens: 6 })).choices[0].text,
      ).toBe(b.choices[0].text);
    } finally {
      await warm.unload();
      await cold.unload();
    }
  });

  it('the same seed gives the same story; penalties and bias change it', async () => {
    const req = { prompt: 'Once upon a time, a dog', temperature: 1, max_tokens: 25, seed: 1234 };
    const a = await engine.completions.create(req);
    const b = await engine.completions.create(req);
    expect(b.choices[0].text).toBe(a.choices[0].text);
    const c = await engine.completions.create({ ...req, seed: 99 });
    expect(c.choices[0].text).not.toBe(a.choices[0].text);
    const greedyPenalised = await engine.completions.create({
      prompt: REF.prompt,
      temperature: 0,
      max_tokens: 30,
      repetition_penalty: 1.5,
      frequency_penalty: 0.5,
    });
    expect(greedyPenalised.choices[0].text).not.toBe(REF.greedy_kv_f32.text);
    const banned = await engine.completions.create({
      prompt: REF.prompt,
      temperature: 0,
      max_tokens: 1,
      logit_bias: { [REF.greedy_kv_f32.tokens[0]]: -100 },
    });
    expect(banned.choices[0].text).not.toBe(', ');
  });

  it('chat works on a model without a template (ChatML fallback)', async () => {
    const r = await engine.chat.completions.create({
      messages: [{ role: 'user', content: 'Tell me a story.' }],
      max_tokens: 8,
      seed: 3,
    });
    expect(r.usage.completion_tokens).toBeGreaterThan(0);
    expect(r.choices[0].message.role).toBe('assistant');
  });
});

describe('the WASM backend', () => {
  it('gives the same greedy text and the same seeded tokens as the CPU reference', async () => {
    const wasm = await createEngine({ model: MODEL, backend: 'wasm', contextLength: 128, threads: 1 });
    const cpu = await createEngine({ model: MODEL, backend: 'cpu', contextLength: 128 });
    try {
      expect(wasm.info.backend.name).toBe('wasm');
      const g = await wasm.completions.create({ prompt: REF.prompt, temperature: 0, max_tokens: 30 });
      expect(g.choices[0].text).toBe(REF.greedy_kv_f32.text);
      const req = { prompt: 'Once upon a time, a cat', temperature: 0.9, max_tokens: 20, seed: 42 };
      const [w, c] = [await wasm.completions.create(req), await cpu.completions.create(req)];
      expect(w.choices[0].text).toBe(c.choices[0].text);
    } finally {
      await wasm.unload();
      await cpu.unload();
    }
  });

  it("backend 'auto' without a hardware WebGPU adapter picks WASM and says why", async () => {
    const e = await createEngine({ model: MODEL, contextLength: 64, threads: 1, warmup: false });
    try {
      expect(e.info.backend.name).toBe('wasm');
      // No `webgpu` package → not available; with it on a GPU-less machine → lavapipe, a software renderer.
      expect(e.info.backend.reason).toMatch(/WebGPU is not available|software renderer/);
    } finally {
      await e.unload();
    }
  });
});

describe('aborts on a real backend', () => {
  it('100 aborted streams leave buffer count and KV state unchanged, and output identical', async () => {
    const { engine, counts } = await engineOnCountingOps();
    const base = await engine.completions.create({ prompt: REF.prompt, temperature: 0, max_tokens: 10 });
    const allocated = { ...counts };
    const kvBefore = engine.context.kv.all().map((s) => ({ n: s.tokens.length, refs: s.refs }));
    for (let i = 0; i < 100; i++) {
      const ac = new AbortController();
      const s = await engine.completions.create({
        prompt: `Once upon a time ${i % 5}`,
        stream: true,
        max_tokens: 40,
        temperature: 0.7,
        seed: i,
        signal: ac.signal,
      });
      let n = 0;
      let err: unknown = null;
      try {
        for await (const _ of s) if (++n === 2) ac.abort();
      } catch (e) {
        err = e;
      }
      expect(isLlmError(err, 'aborted')).toBe(true);
    }
    await engine.settled();
    expect(counts).toEqual(allocated);
    expect(engine.context.kv.all().every((s) => s.refs === 0)).toBe(true);
    expect(engine.context.kv.all().length).toBe(kvBefore.length);
    const again = await engine.completions.create({ prompt: REF.prompt, temperature: 0, max_tokens: 10 });
    expect(again.choices[0].text).toBe(base.choices[0].text);
    await engine.unload();
    expect(counts.destroyed).toBe(1);
  });
});
