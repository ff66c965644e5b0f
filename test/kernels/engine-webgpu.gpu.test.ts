/**
 * The engine on the WebGPU backend (Node: npm `webgpu` / Dawn on lavapipe): greedy stories260K equals llama.cpp,
 * a seeded sample equals the CPU reference's (sampling reads only top-k candidates back), and 100 aborted streams
 * create no GPU buffers and leave the KV state unchanged (counted through a wrapping Ops proxy).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChatMlFormatter } from '../../src/api/chat-formatter.js';
import { createEngine } from '../../src/api/create-engine.js';
import { createEngineFromParts, type LocalEngine } from '../../src/api/local-engine.js';
import type { Ops } from '../../src/backend/ops.js';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { isLlmError } from '../../src/errors.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import { loadTransformer } from '../../src/model/load.js';
import { createTokenizer } from '../../src/tokenizer/index.js';
import { sharedPath } from '../helpers/shared-path.js';

const MODEL = sharedPath('models', 'stories260K.gguf');
const REF = JSON.parse(readFileSync(sharedPath('models', 'stories260K.reference.json'), 'utf8')) as {
  prompt: string;
  greedy_kv_f32: { text: string };
};

async function nodeGpu(): Promise<GPU> {
  process.env.VK_ICD_FILENAMES ??= '/usr/share/vulkan/icd.d/lvp_icd.json';
  const { create, globals } = (await import('webgpu')) as unknown as { create(flags: string[]): GPU; globals: object };
  Object.assign(globalThis, globals);
  return create([]);
}

/** Counts allocating calls (buffers are created only by these). */
function counting(inner: Ops): { ops: Ops; allocations: () => number } {
  let n = 0;
  const ops = new Proxy(inner, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        if (prop === 'uploadWeight' || prop === 'createActivation' || prop === 'createKvCache') n++;
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { ops, allocations: () => n };
}

describe('engine on WebGPU', () => {
  let gpu: GPU;
  beforeAll(async () => {
    gpu = await nodeGpu();
  });

  it("'auto' picks WebGPU; greedy equals llama.cpp; a seeded sample equals the CPU reference", async () => {
    const web = await createEngine({ model: MODEL, backend: 'auto', gpu, contextLength: 128 });
    const cpu = await createEngine({ model: MODEL, backend: 'cpu', contextLength: 128 });
    try {
      expect(web.info.backend).toMatchObject({ name: 'webgpu', reason: 'auto: a WebGPU adapter is available' });
      const g = await web.completions.create({ prompt: REF.prompt, temperature: 0, max_tokens: 30 });
      expect(g.choices[0].text).toBe(REF.greedy_kv_f32.text);
      const req = { prompt: 'Once upon a time, a cat', temperature: 0.9, top_k: 40, max_tokens: 20, seed: 42 };
      expect((await web.completions.create(req)).choices[0].text).toBe(
        (await cpu.completions.create(req)).choices[0].text,
      );
    } finally {
      await web.unload();
      await cpu.unload();
    }
  });

  describe('aborts', () => {
    let engine: LocalEngine;
    let allocations: () => number;
    afterAll(() => engine?.unload());

    it('100 aborted streams (during prefill and mid-stream) allocate nothing and leave KV state unchanged', async () => {
      const source = await NodeFileSource.open(MODEL);
      const gguf = await parseGguf(source);
      const c = counting(await createWebGpuOps({ gpu }));
      allocations = c.allocations;
      const transformer = await loadTransformer(gguf, source, c.ops, { contextLength: 128, nSlots: 2 });
      const tokenizer = createTokenizer(gguf.metadata);
      engine = (await createEngineFromParts({
        transformer,
        tokenizer,
        chat: createChatMlFormatter(tokenizer),
        modelIdentity: 'stories',
        backend: { name: 'webgpu', description: c.ops.description, reason: 'test' },
        contextLength: 128,
        slots: 2,
        onUnload: () => source.close(),
      })) as LocalEngine;
      const base = await engine.completions.create({ prompt: REF.prompt, temperature: 0, max_tokens: 8 });
      const before = allocations();
      for (let i = 0; i < 100; i++) {
        const ac = new AbortController();
        const s = await engine.completions.create({
          prompt: `Once upon a time ${i % 3}`,
          stream: true,
          max_tokens: 30,
          seed: i,
          signal: ac.signal,
        });
        // Even iterations abort while the prompt is being evaluated, odd ones after the first streamed chunk.
        if (i % 2 === 0) setTimeout(() => ac.abort(), 0);
        let err: unknown = null;
        try {
          for await (const _ of s) ac.abort();
        } catch (e) {
          err = e;
        }
        expect(isLlmError(err, 'aborted')).toBe(true);
      }
      await engine.settled();
      expect(allocations()).toBe(before);
      expect(engine.context.kv.all().every((s) => s.refs === 0)).toBe(true);
      const again = await engine.completions.create({ prompt: REF.prompt, temperature: 0, max_tokens: 8 });
      expect(again.choices[0].text).toBe(base.choices[0].text);
    });
  });
});
