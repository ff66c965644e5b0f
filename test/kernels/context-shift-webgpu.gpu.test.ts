/**
 * Context shift on WebGPU (issue #20): the shift runs through readKv / the shared host routine / writeKv; the logits
 * after it match llama.cpp's after the same shift (`fixtures/kv/llama3-f16.shift-f32.json`, see
 * test/reference/context-shift-conformance.test.ts), on the f32 path.
 */

import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import { loadTransformer } from '../../src/model/load.js';
import { destroyTestGpu, getTestGpu } from '../helpers/gpu.js';
import { sharedPath } from '../helpers/shared-path.js';

afterAll(() => destroyTestGpu());

const REF = JSON.parse(readFileSync(new URL('../fixtures/kv/llama3-f16.shift-f32.json', import.meta.url), 'utf8')) as {
  tokens: number[];
  n_keep: number;
  n_discard: number;
  next: number;
  logits_after_shift: number[];
};

describe('webgpu f32: context shift', () => {
  it('the logits after the shift match llama.cpp', async () => {
    const ops = await createWebGpuOps({ gpu: await getTestGpu(), preferF16: false, useSubgroups: false });
    const source = await NodeFileSource.open(sharedPath('models', 'arch', 'llama3-f16.gguf'));
    try {
      const model = await loadTransformer(await parseGguf(source), source, ops, { contextLength: 32, ubatchSize: 4 });
      const n = REF.tokens.length;
      await model.eval(Int32Array.from(REF.tokens), 0, 0, { logits: 'none' });
      await model.shiftContext(0, REF.n_keep, REF.n_discard, n);
      await model.eval(Int32Array.from([REF.next]), n - REF.n_discard, 0);
      const logits = await model.readLogits();
      let diff = 0;
      for (let i = 0; i < logits.length; i++) diff = Math.max(diff, Math.abs(logits[i] - REF.logits_after_shift[i]));
      expect(diff).toBeLessThan(0.02);
      model.destroy();
    } finally {
      await source.close();
    }
  });
});
