/**
 * The forward pass and loader beyond logit conformance: chunking by ubatch (across gemma2's sliding window) gives
 * the same logits, 'last'/'all'/'none' agree, slots copy, requests are validated, loads abort and report progress.
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import { isLlmError } from '../../src/errors.js';
import { parseGguf } from '../../src/gguf/parse.js';
import type { GgufFile } from '../../src/gguf/types.js';
import { MemoryByteSource } from '../../src/io/byte-source.js';
import { loadTransformer, type LoadTransformerOptions } from '../../src/model/load.js';
import { maxAbsDiff } from '../helpers/compare.js';
import { sharedPath } from '../helpers/shared-path.js';

async function open(rel: string): Promise<{ gguf: GgufFile; source: MemoryByteSource }> {
  const source = new MemoryByteSource(readFileSync(sharedPath('models', rel)), rel);
  return { gguf: await parseGguf(source), source };
}

async function load(rel: string, options: LoadTransformerOptions = {}) {
  const { gguf, source } = await open(rel);
  return loadTransformer(gguf, source, createCpuOps(), { contextLength: 64, ...options });
}

const PROMPT = Int32Array.from([1, 82, 113, 346, 701, 265, 263, 931, 47, 727, 471, 263, 696, 101, 327, 49]);

describe('transformer', () => {
  it('gives the same logits whatever the ubatch size (gemma2: sliding window across steps)', async () => {
    const whole = await load('arch/gemma2-f16.gguf', { ubatchSize: 512 });
    const chunked = await load('arch/gemma2-f16.gguf', { ubatchSize: 3 });
    const a = (await whole.eval(PROMPT, 0, 0, { logits: 'all' }))!;
    const b = (await chunked.eval(PROMPT, 0, 0, { logits: 'all' }))!;
    expect(a.length).toBe(PROMPT.length * whole.config.vocabSize);
    expect(maxAbsDiff(a, b)).toBeLessThan(1e-5);
    // Token by token (decode path) gives the last row too.
    const single = await load('arch/gemma2-f16.gguf', { ubatchSize: 1 });
    for (let i = 0; i < PROMPT.length; i++) await single.eval(PROMPT.subarray(i, i + 1), i, 0);
    const last = await single.readLogits();
    expect(maxAbsDiff(last, a.subarray((PROMPT.length - 1) * whole.config.vocabSize))).toBeLessThan(1e-5);
    for (const m of [whole, chunked, single]) m.destroy();
  });

  it("'last', 'all' and 'none' agree; argmax and topK read the last row", async () => {
    const model = await load('stories260K.gguf');
    const tokens = Int32Array.of(1, 403, 407, 261, 378);
    const all = (await model.eval(tokens, 0, 0, { logits: 'all' }))!;
    const lastOfAll = all.subarray(4 * 512);
    expect(maxAbsDiff(await model.readLogits(), lastOfAll)).toBe(0);
    expect(await model.eval(tokens, 0, 0, { logits: 'last' })).toBeNull();
    const last = await model.readLogits();
    expect(maxAbsDiff(last, lastOfAll)).toBeLessThan(1e-5);
    expect(await model.argmax()).toBe(432); // ','
    const top = await model.topK(3);
    expect(top.ids[0]).toBe(432);
    expect(top.logits[0]).toBeGreaterThan(top.logits[1]);
    await model.eval(tokens, 0, 0, { logits: 'none' });
    await expect(model.readLogits()).rejects.toSatisfy((e) => isLlmError(e, 'invalid-request'));
    model.destroy();
  });

  it('copySlot continues a sequence in another slot exactly', async () => {
    const model = await load('stories260K.gguf', { nSlots: 2 });
    await model.eval(Int32Array.of(1, 403, 407), 0, 0);
    model.copySlot(0, 1, 3);
    await model.eval(Int32Array.of(261), 3, 1);
    const fromCopy = await model.readLogits();
    await model.eval(Int32Array.of(261), 3, 0);
    expect(maxAbsDiff(await model.readLogits(), fromCopy)).toBe(0);
    model.destroy();
  });

  it('rejects bad requests with named errors', async () => {
    const model = await load('stories260K.gguf', { contextLength: 4 });
    const codeOf = (p: Promise<unknown>) =>
      p.then(
        () => 'ok',
        (e) => (isLlmError(e) ? e.code : String(e)),
      );
    expect(await codeOf(model.eval(Int32Array.of(1, 2, 3, 4, 5), 0, 0))).toBe('context-overflow');
    expect(await codeOf(model.eval(Int32Array.of(1), 0, 1))).toBe('invalid-request');
    expect(await codeOf(model.eval(Int32Array.of(512), 0, 0))).toBe('invalid-request');
    expect(await codeOf(model.eval(new Int32Array(0), 0, 0))).toBe('invalid-request');
    const controller = new AbortController();
    controller.abort();
    expect(await codeOf(model.eval(Int32Array.of(1), 0, 0, { signal: controller.signal }))).toBe('aborted');
    model.destroy();
  });

  it('loading reports progress, honours abort and names an unsupported architecture', async () => {
    const { gguf, source } = await open('stories260K.gguf');
    const seen: number[] = [];
    const model = await loadTransformer(gguf, source, createCpuOps(), {
      contextLength: 8,
      onProgress: (p) => seen.push(p.loadedBytes / p.totalBytes),
    });
    expect(seen.length).toBe(gguf.tensors.length);
    expect(seen[seen.length - 1]).toBe(1);
    model.destroy();

    const controller = new AbortController();
    controller.abort();
    const aborted = await loadTransformer(gguf, source, createCpuOps(), { signal: controller.signal }).catch((e) => e);
    expect(isLlmError(aborted, 'aborted')).toBe(true);

    const mamba: GgufFile = { ...gguf, metadata: { ...gguf.metadata, 'general.architecture': 'mamba' } };
    const err = await loadTransformer(mamba, source, createCpuOps()).catch((e) => e);
    expect(isLlmError(err, 'unsupported-arch')).toBe(true);
    expect(err.message).toContain("'mamba'");

    const broken: GgufFile = { ...gguf, tensors: gguf.tensors.filter((t) => t.name !== 'blk.2.ffn_up.weight') };
    const missing = await loadTransformer(broken, source, createCpuOps()).catch((e) => e);
    expect(isLlmError(missing, 'gguf-invalid')).toBe(true);
    expect(missing.message).toContain('blk.2.ffn_up.weight');
  });
});
