/**
 * Pooling of hidden states into embeddings (src/model/pooling.ts) with llama.cpp's semantics, the finishing steps
 * (L2 normalisation, Matryoshka truncation with re-normalisation), and how `pooling_type` / `attention.causal` are
 * read from the metadata.
 */

import { describe, expect, it } from 'vitest';
import { isLlmError } from '../../../src/errors.js';
import type { GgufValue } from '../../../src/gguf/types.js';
import { getArchitecture } from '../../../src/model/arch/index.js';
import { finishEmbedding, poolHiddenStates, rankOutputs } from '../../../src/model/pooling.js';

// 3 tokens × 2 dims
const hidden = Float32Array.from([1, 2, 3, 4, 5, 9]);

const meta = (extra: Record<string, GgufValue> = {}): Record<string, GgufValue> => ({
  'general.architecture': 'qwen3',
  'qwen3.embedding_length': 64,
  'qwen3.block_count': 2,
  'qwen3.attention.head_count': 4,
  'qwen3.feed_forward_length': 128,
  ...extra,
});

describe('poolHiddenStates', () => {
  it('mean averages every row, cls takes the first, last the last', () => {
    expect(Array.from(poolHiddenStates(hidden, 3, 2, 'mean'))).toEqual([3, 5]);
    expect(Array.from(poolHiddenStates(hidden, 3, 2, 'cls'))).toEqual([1, 2]);
    expect(Array.from(poolHiddenStates(hidden, 3, 2, 'last'))).toEqual([5, 9]);
    expect(Array.from(poolHiddenStates(hidden, 1, 2, 'last'))).toEqual([1, 2]);
  });

  it("'none' and 'rank' give no sentence embedding: invalid-request", () => {
    for (const p of ['none', 'rank'] as const) {
      expect(() => poolHiddenStates(hidden, 3, 2, p)).toThrow(/pooling type is/);
      try {
        poolHiddenStates(hidden, 3, 2, p);
      } catch (e) {
        expect(isLlmError(e, 'invalid-request')).toBe(true);
      }
    }
    expect(() => poolHiddenStates(hidden, 4, 2, 'mean')).toThrow(/do not fit/);
  });
});

describe('finishEmbedding', () => {
  it('normalises to unit length, truncates first and re-normalises, leaves zeros and raw vectors alone', () => {
    const v = Float32Array.from([3, 4, 12]);
    expect(Array.from(finishEmbedding(v, undefined, true))).toEqual([3 / 13, 4 / 13, 12 / 13].map(Math.fround));
    expect(Array.from(finishEmbedding(v, 2, true))).toEqual([0.6, 0.8].map(Math.fround));
    expect(Array.from(finishEmbedding(v, 2, false))).toEqual([3, 4]);
    expect(Array.from(finishEmbedding(new Float32Array(2), undefined, true))).toEqual([0, 0]);
    expect(Array.from(v)).toEqual([3, 4, 12]); // input untouched
  });
});

describe('rankOutputs', () => {
  it('projects the first row (+ bias) without softmax, or the last row with softmax (qwen3)', () => {
    const weight = Float32Array.from([1, 0, 0, 1]); // [2 outputs, 2 dims]: identity
    const plain = { weight, bias: Float32Array.from([10, 20]), nOut: 2, lastToken: false, softmax: false };
    expect(Array.from(rankOutputs(hidden, 3, 2, plain))).toEqual([11, 22]);
    const qwen3 = { weight, bias: null, nOut: 2, lastToken: true, softmax: true };
    const [p0, p1] = Array.from(rankOutputs(hidden, 3, 2, qwen3)); // softmax(5, 9)
    expect(p0).toBeCloseTo(1 / (1 + Math.exp(4)), 6);
    expect(p0! + p1!).toBeCloseTo(1, 6);
  });
});

describe('pooling_type and attention.causal in the config', () => {
  it('reads llama.cpp enum values, defaults to none and causal', () => {
    const qwen3 = getArchitecture('qwen3');
    expect(qwen3.config(meta())).toMatchObject({ poolingType: 'none', causalAttention: true });
    const names = ['none', 'mean', 'cls', 'last', 'rank'];
    names.forEach((name, id) => expect(qwen3.config(meta({ 'qwen3.pooling_type': id })).poolingType).toBe(name));
    expect(qwen3.config(meta({ 'qwen3.attention.causal': false })).causalAttention).toBe(false);
  });

  it('an unknown pooling type is gguf-invalid naming the key', () => {
    try {
      getArchitecture('qwen3').config(meta({ 'qwen3.pooling_type': 7 }));
      expect.unreachable();
    } catch (e) {
      expect(isLlmError(e, 'gguf-invalid')).toBe(true);
      expect((e as Error).message).toContain('qwen3.pooling_type');
    }
  });
});
