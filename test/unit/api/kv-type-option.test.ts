/**
 * `EngineOptions.kvType` (issue #20): validated up front, passed to the backend, reported by `stats()` with the KV
 * bytes (Q8_0 about half of F16), and a type a backend cannot store is a clear `LlmError` (WebGPU stores only its own).
 * Without it: the backend's own type, except f16 for decoders on wasm (src/api/default-kv-type.ts).
 */

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/api/create-engine.js';
import type { KvType } from '../../../src/backend/kv-type.js';
import { llmError } from '../../helpers/llm-error.js';
import { RECORDED_FIXTURE_DIR, sharedPath } from '../../helpers/shared-path.js';

const MODEL = sharedPath('models', 'arch', 'llama3-f16.gguf'); // 2 layers × 2 KV heads × 32
const BERT = join(RECORDED_FIXTURE_DIR, 'bert-f32-embd-cls-noncausal-s1.gguf'); // an encoder
const GEMMA_EMBED = join(RECORDED_FIXTURE_DIR, 'gemma-embedding-f32-embd-mean-noncausal-s1.gguf'); // a pooled decoder
const CONTEXT = 64;
const SLOTS = 2;

describe('kvType engine option', () => {
  it('stores the cache as asked and reports its bytes; the text still comes out', async () => {
    const bytes: Partial<Record<KvType, number>> = {};
    for (const kvType of ['f32', 'f16', 'q8_0', 'q4_0'] as const) {
      const engine = await createEngine({
        model: MODEL,
        backend: 'wasm',
        threads: 1,
        contextLength: CONTEXT,
        slots: SLOTS,
        kvType,
        warmup: false,
      });
      try {
        const out = await engine.completions.create({ prompt: 'Once upon a time', max_tokens: 4, temperature: 0 });
        expect(out.usage.completion_tokens).toBe(4);
        const { kvCache } = await engine.stats();
        expect(kvCache.type).toBe(kvType);
        bytes[kvType] = kvCache.bytes;
      } finally {
        await engine.unload();
      }
    }
    const values = SLOTS * 2 * 2 * CONTEXT * 64; // slots × layers × (K, V) × positions × KV width
    expect(bytes).toEqual({ f32: values * 4, f16: values * 2, q8_0: (values / 32) * 34, q4_0: (values / 32) * 18 });
  });

  it('defaults to the backend’s own type', async () => {
    const engine = await createEngine({ model: MODEL, backend: 'cpu', contextLength: CONTEXT, warmup: false });
    expect((await engine.stats()).kvCache.type).toBe('f32');
    await engine.unload();
  });

  it('defaults to f16 on wasm for a decoder (llama.cpp’s default), f32 for an encoder and a pooled decoder', async () => {
    const opts = { backend: 'wasm', threads: 1, contextLength: CONTEXT, warmup: false } as const;
    const engine = await createEngine({ model: MODEL, ...opts });
    const { kvCache } = await engine.stats();
    expect(kvCache).toEqual({ type: 'f16', bytes: 2 * 2 * 2 * CONTEXT * 64 * 2 }); // 2 slots × 2 layers × (K, V)
    await engine.unload();
    const bert = await createEngine({ model: BERT, ...opts });
    expect((await bert.stats()).kvCache.type).toBe('f32');
    await bert.unload();
    const pooled = await createEngine({ model: GEMMA_EMBED, ...opts });
    expect((await pooled.stats()).kvCache.type).toBe('f32');
    await pooled.unload();
  });

  it('rejects an unknown type before loading', async () => {
    const e = await llmError(createEngine({ model: MODEL, backend: 'cpu', kvType: 'q5_1' as KvType }));
    expect(e.code).toBe('invalid-request');
    expect(e.message).toMatch(/'kvType' is 'q5_1'/);
  });
});
