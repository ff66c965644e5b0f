/**
 * The comparison and reference-file helpers the conformance suites rely on: max |Δ|, NMSE, argmax agreement,
 * the tolerance table and its overrides, and rejection of malformed reference JSON.
 */

import { describe, expect, it } from 'vitest';
import { isLlmError } from '../../src/errors.js';
import { parseReferenceJson, topMargin } from '../../src/model/conformance.js';
import { argmaxAgreement, compare } from '../helpers/compare.js';
import { listReferenceFixtures } from '../helpers/reference-json.js';
import { backendTolerances, tolerancesFor } from '../helpers/tolerance.js';

describe('conformance helpers', () => {
  it('compare: max |Δ|, NMSE against the reference, argmax agreement', () => {
    const c = compare([1, 2, 4], [1, 3, 3]);
    expect(c.maxAbs).toBe(1);
    expect(c.nmse).toBeCloseTo(2 / 19, 12);
    expect(c.argmaxAgree).toBe(false);
    expect(compare([Number.NaN, 0], [0, 0]).maxAbs).toBeNaN();
    expect(argmaxAgreement([1, 0, 0, 1, 5, 4], [2, 1, 1, 0, 3, 2], 2)).toBe(2);
    expect(topMargin([3, 1, 2.5])).toBeCloseTo(0.5, 12);
  });

  it('tolerance table: reference limits by weight class and arch, backend overrides', () => {
    const gemmaQ = { weights: 'quantized' as const, arch: 'gemma2', id: 'x' };
    expect(tolerancesFor(gemmaQ)).toEqual({ dequantF32: 2e-2, kvF32: 0.5, argmaxMargin: 0.5 });
    expect(tolerancesFor({ weights: 'f32', arch: 'llama', id: 'x' })).toEqual({
      dequantF32: 1e-3,
      kvF32: 1e-3,
      argmaxMargin: 0.5,
    });
    expect(tolerancesFor({ weights: 'f16', arch: 'qwen2', id: 'x' }, backendTolerances(0.01)).dequantF32).toBeCloseTo(
      0.03,
      12,
    );
    expect(tolerancesFor({ weights: 'bf16', arch: 'llama', id: 'x' }, { kvF32: 1 }).kvF32).toBe(1);
  });

  it('rejects malformed reference files with invalid-request naming the file', () => {
    const bad = (text: string): unknown => {
      try {
        parseReferenceJson(text, 'ref.json');
      } catch (e) {
        return e;
      }
      return null;
    };
    for (const text of [
      '{',
      '[]',
      '{"eval_input": [1], "n_vocab": 2}',
      '{"eval_input": [1], "n_vocab": 2, "logits_per_position_kv_f32": [[1]]}',
    ]) {
      const e = bad(text);
      expect(isLlmError(e, 'invalid-request')).toBe(true);
      expect((e as Error).message).toContain('ref.json');
    }
    expect(bad('{"eval_input": [1], "n_vocab": 2, "logits_per_position_kv_f32": [[1, 2]]}')).toBeNull();
  });

  it('lists every shared model that has a reference, greedy required for stories260K and derived/', () => {
    const fixtures = listReferenceFixtures();
    expect(fixtures.length).toBeGreaterThanOrEqual(30);
    expect(fixtures.filter((f) => f.requireGreedy).map((f) => f.id)).toContain('stories260K.gguf');
    expect(
      fixtures.every((f) => f.requireGreedy === (f.id === 'stories260K.gguf' || f.id.startsWith('derived/'))),
    ).toBe(true);
  });
});
