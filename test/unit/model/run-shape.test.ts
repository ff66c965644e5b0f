/**
 * The memory plan sizes activations with `activationBytes` (model/run-shape.ts); the transformer allocates from the
 * same list. A buffer added to one but not the other fails here (issue #13: no hand-copied buffer list).
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../../src/backend/cpu/cpu-ops.js';
import type { Ops } from '../../../src/backend/ops.js';
import { parseGguf } from '../../../src/gguf/parse.js';
import { MemoryByteSource } from '../../../src/io/byte-source.js';
import { loadTransformer, readModelConfig } from '../../../src/model/load.js';
import { activationBytes, defaultContextLength, DEFAULT_CONTEXT_LENGTH } from '../../../src/model/run-shape.js';
import { sharedPath } from '../../helpers/shared-path.js';

/** `ops` with a tally of the bytes of every activation it allocates. */
function counting(ops: Ops): { ops: Ops; bytes: () => number } {
  let total = 0;
  const wrapped = new Proxy(ops, {
    get(target, prop, receiver) {
      const v: unknown = Reflect.get(target, prop, receiver);
      if (prop === 'createActivation') {
        return (label: string, rows: number, cols: number) => {
          total += rows * cols * 4;
          return target.createActivation(label, rows, cols);
        };
      }
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { ops: wrapped, bytes: () => total };
}

describe('run shape', () => {
  for (const rel of ['stories260K.gguf', 'arch/gemma2-f16.gguf']) {
    it(`${rel}: activationBytes equals what the transformer allocates`, async () => {
      const source = new MemoryByteSource(readFileSync(sharedPath('models', rel)), rel);
      const gguf = await parseGguf(source);
      for (const shape of [
        { contextLength: 64, ubatchSize: 7 },
        { contextLength: 16, ubatchSize: 512 },
      ]) {
        const c = counting(createCpuOps());
        const model = await loadTransformer(gguf, source, c.ops, { ...shape, nSlots: 1 });
        expect(c.bytes()).toBe(activationBytes(model.config, shape));
        model.destroy();
      }
    });
  }

  it('defaults the KV size to the training context, at most 4096, and to 4096 when the file gives none', async () => {
    const source = new MemoryByteSource(readFileSync(sharedPath('models', 'stories260K.gguf')));
    const config = readModelConfig(await parseGguf(source));
    expect(defaultContextLength(config)).toBe(Math.min(config.trainContextLength, DEFAULT_CONTEXT_LENGTH));
    expect(defaultContextLength({ ...config, trainContextLength: 0 })).toBe(DEFAULT_CONTEXT_LENGTH);
    expect(defaultContextLength({ ...config, trainContextLength: 1 << 20 })).toBe(DEFAULT_CONTEXT_LENGTH);
  });
});
