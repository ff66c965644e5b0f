/**
 * Packing several inputs into one encoder pass (`model/packed-hidden.ts`, `EncoderModel.hiddenStatesPacked`): the
 * grouping by step size, and on the CPU reference backend the packed hidden states of the recorded bert fixture equal
 * each sequence run alone (no sequence attends to another; positions restart per sequence), through
 * `forEachHiddenStates` and through `engine.embeddings.create`; a pack over the step is `invalid-request`.
 */

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createEngine } from '../../../src/api/create-engine.js';
import { createCpuOps } from '../../../src/backend/cpu/cpu-ops.js';
import { createWasmOps } from '../../../src/backend/wasm/index.js';
import { parseGguf } from '../../../src/gguf/parse.js';
import { NodeFileSource } from '../../../src/io/node-file-source.js';
import type { EncoderModel } from '../../../src/model/encoder.js';
import { loadAnyModel } from '../../../src/model/load-any.js';
import { forEachHiddenStates, packSequences } from '../../../src/model/packed-hidden.js';
import { llmError } from '../../helpers/llm-error.js';
import { RECORDED_FIXTURE_DIR } from '../../helpers/shared-path.js';

const MODEL = join(RECORDED_FIXTURE_DIR, 'bert-f32-embd-cls-noncausal-s1.gguf');
/** Token-id inputs of several lengths (ids inside the fixture's 512-token vocabulary). */
const INPUTS = [5, 9, 3, 12, 7, 4].map((len, s) =>
  Array.from({ length: len }, (_, i) => 1 + ((s * 37 + i * 11) % 500)),
);

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

describe('packSequences', () => {
  it('groups consecutive sequences while their total fits, a too-long one alone', () => {
    expect(packSequences([5, 9, 3, 12, 7, 4], 16)).toEqual([
      [0, 1],
      [2, 3],
      [4, 5],
    ]);
    expect(packSequences([20, 2, 2], 16)).toEqual([[0], [1, 2]]);
    expect(packSequences([4, 4, 4, 4], 16)).toEqual([[0, 1, 2, 3]]);
    expect(packSequences([], 16)).toEqual([]);
  });
});

describe('packed encoder passes on the cpu reference', () => {
  let source: NodeFileSource;
  let model: EncoderModel;
  beforeAll(async () => {
    source = await NodeFileSource.open(MODEL);
    const gguf = await parseGguf(source);
    // A step of 16 tokens over a context of 12: the packs are bounded by the step, not the context.
    model = (await loadAnyModel(gguf, source, createCpuOps(), { contextLength: 12, ubatchSize: 16 })) as EncoderModel;
  });
  afterAll(async () => {
    model.destroy();
    await source.close();
  });

  it('three packed passes give the hidden states of each sequence run alone', async () => {
    const alone: Float32Array[] = [];
    for (const ids of INPUTS) alone.push(await model.hiddenStates(Int32Array.from(ids), 0));
    const packed = vi.spyOn(model, 'hiddenStatesPacked');
    const got: Float32Array[] = [];
    await forEachHiddenStates(model, INPUTS, 0, undefined, (i, hidden) => {
      got[i] = hidden.slice();
    });
    expect(packed).toHaveBeenCalledTimes(3);
    packed.mockRestore();
    INPUTS.forEach((ids, i) => {
      expect(got[i]).toHaveLength(ids.length * model.config.embeddingLength);
      expect(maxAbsDiff(got[i]!, alone[i]!), `input ${i}`).toBeLessThanOrEqual(1e-5);
    });
  });

  it("pooledStates gives each sequence's first (cls) or last row of its hidden states alone", async () => {
    const E = model.config.embeddingLength;
    const alone: Float32Array[] = [];
    for (const ids of INPUTS) alone.push(await model.hiddenStates(Int32Array.from(ids), 0));
    for (const pooling of ['cls', 'last'] as const) {
      const pooled = vi.spyOn(model, 'pooledStates');
      const got: Float32Array[] = [];
      await forEachHiddenStates(
        model,
        INPUTS,
        0,
        undefined,
        (i, hidden) => {
          got[i] = hidden.slice();
        },
        pooling,
      );
      expect(pooled).toHaveBeenCalledTimes(3);
      pooled.mockRestore();
      INPUTS.forEach((ids, i) => {
        const row = pooling === 'cls' ? 0 : ids.length - 1;
        expect(got[i]).toHaveLength(E);
        expect(maxAbsDiff(got[i]!, alone[i]!.subarray(row * E, (row + 1) * E)), `${pooling} ${i}`).toBeLessThanOrEqual(
          1e-5,
        );
      });
    }
    // One sequence alone, then the whole hidden states again: the pooled pass leaves nothing behind.
    const one = await model.pooledStates([Int32Array.from(INPUTS[3]!)], 0, 'last');
    expect(maxAbsDiff(one, alone[3]!.subarray((INPUTS[3]!.length - 1) * E))).toBeLessThanOrEqual(1e-5);
    expect(maxAbsDiff(await model.hiddenStates(Int32Array.from(INPUTS[0]!), 0), alone[0]!)).toBe(0);
  });

  it('a pack over the step, or of nothing, is invalid-request', async () => {
    const over = await llmError(
      model.hiddenStatesPacked([Int32Array.from(INPUTS[1]!), Int32Array.from(INPUTS[3]!)], 0),
    );
    expect(over.code).toBe('invalid-request');
    expect(over.message).toMatch(/do not fit one step of 16/);
    expect((await llmError(model.hiddenStatesPacked([], 0))).code).toBe('invalid-request');
    expect((await llmError(model.pooledStates([], 0, 'cls'))).code).toBe('invalid-request');
    const pooledOver = await llmError(
      model.pooledStates([Int32Array.from(INPUTS[1]!), Int32Array.from(INPUTS[3]!)], 0, 'cls'),
    );
    expect(pooledOver.message).toMatch(/do not fit one step of 16/);
    const long = await llmError(model.hiddenStatesPacked([Int32Array.of(1), new Int32Array(13).fill(1)], 0));
    expect(long.code).toBe('context-overflow');
  });
});

describe('pooled rows on the wasm backend (its attention computes the pooled row alone)', () => {
  it('pooledStates equals the first / last rows of the full hidden states, one and two threads', async () => {
    for (const threads of [1, 2]) {
      const source = await NodeFileSource.open(MODEL);
      const gguf = await parseGguf(source);
      const ops = await createWasmOps({ threads });
      const m = (await loadAnyModel(gguf, source, ops, { contextLength: 12, ubatchSize: 16 })) as EncoderModel;
      try {
        const E = m.config.embeddingLength;
        const seqs = [INPUTS[0]!, INPUTS[1]!].map((t) => Int32Array.from(t)); // 5 + 9 tokens: one step
        const all = await m.hiddenStatesPacked(seqs, 0); // [14, E]
        for (const pooling of ['cls', 'last'] as const) {
          const got = await m.pooledStates(seqs, 0, pooling); // [2, E]
          const rows = pooling === 'cls' ? [0, 5] : [4, 13];
          rows.forEach((r, j) => {
            const want = all.subarray(r * E, (r + 1) * E);
            expect(
              maxAbsDiff(got.subarray(j * E, (j + 1) * E), want),
              `${threads} ${pooling} ${j}`,
            ).toBeLessThanOrEqual(1e-5);
          });
        }
      } finally {
        m.destroy();
        await source.close();
      }
    }
  });
});

describe('embeddings.create packs its inputs', () => {
  it('many inputs in one request equal each input asked alone', async () => {
    const engine = await createEngine({ model: MODEL, backend: 'cpu', contextLength: 16, ubatchSize: 24 });
    try {
      const all = await engine.embeddings.create({ input: INPUTS });
      expect(all.usage.prompt_tokens).toBe(INPUTS.reduce((s, t) => s + t.length, 0));
      for (const [i, ids] of INPUTS.entries()) {
        const one = await engine.embeddings.create({ input: [ids] });
        expect(all.data[i]!.index).toBe(i);
        expect(maxAbsDiff(all.data[i]!.embedding as number[], one.data[0]!.embedding as number[])).toBeLessThanOrEqual(
          1e-5,
        );
      }
    } finally {
      await engine.unload();
    }
  });
});
