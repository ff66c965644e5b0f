/**
 * Every count a model file declares is bounded before anything is sized by it (issue #21 item 1): huge, zero,
 * negative and fractional values of each key make `config(meta)` throw `gguf-invalid` naming the key and the value —
 * never a heap out-of-memory abort or a raw `RangeError`. Also the values that would make the output non-finite
 * (eps, rope base, scaling) and the per-layer arrays whose length must match block_count.
 */

import { describe, expect, it } from 'vitest';
import type { GgufValue } from '../../../src/gguf/types.js';
import { architectureNames, getArchitecture } from '../../../src/model/arch/index.js';
import { thrownLlmError } from '../../helpers/llm-error.js';

const minimal = (arch: string, extra: Record<string, GgufValue> = {}): Record<string, GgufValue> => ({
  'general.architecture': arch,
  [`${arch}.embedding_length`]: 64,
  [`${arch}.block_count`]: 4,
  [`${arch}.attention.head_count`]: 4,
  [`${arch}.feed_forward_length`]: 128,
  // Mixture-of-experts architectures need their expert counts (checked below).
  ...(getArchitecture(arch).options.moeRouting
    ? { [`${arch}.expert_count`]: 8, [`${arch}.expert_used_count`]: 2 }
    : {}),
  ...extra,
});

const HUGE: readonly GgufValue[] = [1e8, 2 ** 31, 2n ** 40n, 2n ** 63n];

function expectInvalid(arch: string, extra: Record<string, GgufValue>, key: string, shown: RegExp): void {
  const start = performance.now();
  const err = thrownLlmError(() => getArchitecture(arch).config(minimal(arch, extra)));
  expect(performance.now() - start).toBeLessThan(1000); // nothing was allocated by the count
  expect(err.code, err.message).toBe('gguf-invalid');
  expect(err.message).toContain(`'${key}'`);
  expect(err.message).toMatch(shown);
}

describe('model config bounds', () => {
  for (const arch of architectureNames()) {
    it(`${arch}: huge counts are gguf-invalid naming the key and value`, () => {
      for (const suffix of [
        'block_count',
        'embedding_length',
        'attention.head_count',
        'feed_forward_length',
        'expert_count',
      ]) {
        for (const v of HUGE)
          expectInvalid(arch, { [`${arch}.${suffix}`]: v }, `${arch}.${suffix}`, new RegExp(String(v)));
      }
      for (const suffix of ['attention.head_count_kv', 'attention.key_length', 'vocab_size', 'context_length']) {
        expectInvalid(arch, { [`${arch}.${suffix}`]: 2n ** 40n }, `${arch}.${suffix}`, /1099511627776/);
      }
    });

    it(`${arch}: zero, negative and fractional counts are gguf-invalid`, () => {
      for (const suffix of ['block_count', 'embedding_length', 'attention.head_count', 'feed_forward_length']) {
        for (const v of [0, -1, 2.5, NaN])
          expectInvalid(arch, { [`${arch}.${suffix}`]: v }, `${arch}.${suffix}`, new RegExp(String(v)));
      }
      expectInvalid(arch, { [`${arch}.attention.head_count_kv`]: 0 }, `${arch}.attention.head_count_kv`, /0/);
    });

    it(`${arch}: eps, rope base and scaling must be finite and in range`, () => {
      expectInvalid(
        arch,
        { [`${arch}.attention.layer_norm_rms_epsilon`]: NaN },
        `${arch}.attention.layer_norm_rms_epsilon`,
        /NaN/,
      );
      expectInvalid(
        arch,
        { [`${arch}.attention.layer_norm_rms_epsilon`]: -1 },
        `${arch}.attention.layer_norm_rms_epsilon`,
        /-1/,
      );
      expectInvalid(arch, { [`${arch}.rope.freq_base`]: 0 }, `${arch}.rope.freq_base`, /is 0/);
      expectInvalid(arch, { [`${arch}.rope.freq_base`]: Infinity }, `${arch}.rope.freq_base`, /Infinity/);
      expectInvalid(arch, { [`${arch}.rope.scaling.factor`]: NaN }, `${arch}.rope.scaling.factor`, /NaN/);
    });

    it(`${arch}: n_embd / n_head not an integer names head_count, not the absent key_length`, () => {
      const err = thrownLlmError(() =>
        getArchitecture(arch).config(minimal(arch, { [`${arch}.attention.head_count`]: 3 })),
      );
      expect(err.code).toBe('gguf-invalid');
      expect(err.message).toContain(`'${arch}.attention.head_count' = 3`);
      expect(err.message).not.toContain('key_length');
    });
  }

  it('per-layer arrays must have one entry per layer, checked before copying', () => {
    const key = 'gemma2.attention.sliding_window_pattern';
    expectInvalid('gemma2', { [key]: new Array<GgufValue>(7).fill(true) }, key, /7 entries/);
    const big = new Uint8Array(64 * 1024 * 1024);
    expectInvalid('gemma2', { [key]: big as unknown as GgufValue }, key, /67108864 entries/);
    expectInvalid(
      'gemma3',
      { 'gemma3.attention.sliding_window': 2n ** 40n },
      'gemma3.attention.sliding_window',
      /1099511627776/,
    );
    for (const suffix of ['attention.head_count', 'attention.head_count_kv', 'feed_forward_length']) {
      expectInvalid(
        'llama',
        { [`llama.${suffix}`]: new Uint32Array(64 * 1024 * 1024) as unknown as GgufValue },
        `llama.${suffix}`,
        /67108864 entries/,
      );
    }
  });
});
