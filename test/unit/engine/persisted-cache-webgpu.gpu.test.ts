/**
 * Issue #20, persisted prompt cache on WebGPU (Node: Dawn on lavapipe): `readKv`/`writeKv` move the KV rows of a
 * prefix through the persisted cache so a new WebGPU engine continues exactly like a cold one; rows in f16 are not
 * loaded into an f32 (cpu) cache.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/api/create-engine.js';
import type { Engine, EngineOptions } from '../../../src/api/engine.js';
import { listPromptCaches, memoryPromptCacheStore } from '../../../src/io/prompt-cache-store.js';
import { getTestGpu } from '../../helpers/gpu.js';
import { sharedPath } from '../../helpers/shared-path.js';

const MODEL = sharedPath('models', 'stories260K.gguf');
const LONG =
  'Once upon a time there was a little girl named Lily who loved to play in the park with her big red ball and her dog. One day she found a';

let gpu: GPU;
const engines: Engine[] = [];
async function open(options: Partial<EngineOptions>): Promise<Engine> {
  const e = await createEngine({ model: MODEL, backend: 'webgpu', gpu, contextLength: 128, warmup: false, ...options });
  engines.push(e);
  return e;
}

beforeAll(async () => {
  gpu = await getTestGpu();
});
afterAll(async () => {
  await Promise.all(engines.map((e) => e.unload()));
});

describe('persisted prompt cache on WebGPU', () => {
  it('save → new engine → restore gives the cold output; f16 rows are refused by an f32 cache', async () => {
    const store = memoryPromptCacheStore();
    const cold = (
      await (await open({ persistedCache: false })).completions.create({ prompt: LONG, temperature: 0, max_tokens: 30 })
    ).choices[0].text;
    const a = await open({ persistedCache: { store, auto: false } });
    await a.completions.create({ prompt: LONG, temperature: 0, max_tokens: 1 });
    expect(await a.saveCache()).toBe(1);
    const [record] = await listPromptCaches({ store });
    const b = await open({ persistedCache: { store } });
    const r = await b.completions.create({ prompt: LONG, temperature: 0, max_tokens: 30 });
    expect(r.usage.prompt_tokens_details?.cached_tokens).toBe(r.usage.prompt_tokens - 1);
    expect(r.choices[0].text).toBe(cold);
    if (record.kv.startsWith('f16:')) {
      const cpu = await open({ backend: 'cpu', persistedCache: { store } });
      const c = await cpu.completions.create({ prompt: LONG, temperature: 0, max_tokens: 1 });
      expect(c.usage.prompt_tokens_details?.cached_tokens).toBe(0);
    }
  });
});
