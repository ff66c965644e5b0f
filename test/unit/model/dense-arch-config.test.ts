/**
 * The hyper-parameters of the dense architectures added for issue 14 (olmo2, granite, exaone4, …) as llama.cpp reads
 * them: defaults when keys are absent, the per-layer plans (sliding, NoPE) they imply, and `gguf-invalid` naming
 * the key for values llama.cpp refuses.
 */

import { describe, expect, it } from 'vitest';
import type { GgufValue } from '../../../src/gguf/types.js';
import { getArchitecture } from '../../../src/model/arch/index.js';
import { attentionLayers } from '../../../src/model/layer-spec.js';
import { thrownLlmError } from '../../helpers/llm-error.js';

const meta = (arch: string, extra: Record<string, GgufValue> = {}, layers = 4): Record<string, GgufValue> => ({
  'general.architecture': arch,
  [`${arch}.embedding_length`]: 64,
  [`${arch}.block_count`]: layers,
  [`${arch}.attention.head_count`]: 4,
  [`${arch}.feed_forward_length`]: 128,
  ...extra,
});

describe('dense architectures: config', () => {
  it('olmo2: post-norms only, q/k norms over all heads; OLMo 3 sliding layers rotate unscaled', () => {
    const c = getArchitecture('olmo2').config(meta('olmo2'));
    expect(c).toMatchObject({ preNorms: false, postNorms: true, qkNorm: true, qkNormScope: 'all-heads' });
    expect(c.slidingWindow).toBe(0);
    const swa = getArchitecture('olmo2').config(
      meta('olmo2', { 'olmo2.attention.sliding_window': 8, 'olmo2.rope.scaling.factor': 4 }),
    );
    const layers = attentionLayers(swa);
    expect(layers.map((l) => l.slidingWindow)).toEqual([8, 8, 8, 0]);
    expect(layers[0]!.rope).toMatchObject({ theta: 10000, freqScale: 1, yarn: null });
    expect(layers[3]!.rope).toMatchObject({ freqScale: 0.25 });
  });

  it('granite: multipliers from the file (absent or 0 = none), logits divided by the required logit_scale', () => {
    const c = getArchitecture('granite').config(
      meta('granite', {
        'granite.logit_scale': 8,
        'granite.embedding_scale': 12,
        'granite.residual_scale': 0.22,
        'granite.attention.scale': 0.0078125,
      }),
    );
    expect(c).toMatchObject({ logitScale: 0.125, embeddingScale: 12, residualScale: 0.22, attentionScale: 0.0078125 });
    const plain = getArchitecture('granite').config(meta('granite', { 'granite.logit_scale': 1 }));
    expect(plain).toMatchObject({ logitScale: 1, embeddingScale: 1, residualScale: 1, attentionScale: 0.25 });
    expect(attentionLayers(plain).every((l) => l.rope !== null)).toBe(true);
    const noRope = getArchitecture('granite').config(
      meta('granite', { 'granite.logit_scale': 1, 'granite.rope.scaling.finetuned': false }),
    );
    expect(attentionLayers(noRope).every((l) => l.rope === null)).toBe(true);
    const bads: Record<string, GgufValue>[] = [{}, { 'granite.logit_scale': 0 }, { 'granite.logit_scale': Number.NaN }];
    for (const bad of bads) {
      const err = thrownLlmError(() => getArchitecture('granite').config(meta('granite', bad)));
      expect(err.code).toBe('gguf-invalid');
      expect(err.message).toContain("'granite.logit_scale'");
    }
    const err = thrownLlmError(() =>
      getArchitecture('granite').config(meta('granite', { 'granite.logit_scale': 1, 'granite.residual_scale': -1 })),
    );
    expect(err.code).toBe('gguf-invalid');
    expect(err.message).toContain("'granite.residual_scale'");
  });

  it('exaone4: hybrid only at 64 layers (sliding layers rotate, global ones are NoPE); otherwise all rope, no window', () => {
    const small = getArchitecture('exaone4').config(meta('exaone4', { 'exaone4.attention.sliding_window': 8 }, 30));
    expect(attentionLayers(small).every((l) => l.slidingWindow === 0 && l.rope !== null)).toBe(true);
    const big = getArchitecture('exaone4').config(meta('exaone4', {}, 64));
    const layers = attentionLayers(big);
    expect(layers.slice(0, 4).map((l) => l.slidingWindow)).toEqual([4096, 4096, 4096, 0]);
    expect(layers.slice(0, 4).map((l) => l.rope !== null)).toEqual([true, true, true, false]);
    expect(big).toMatchObject({ preNorms: false, postNorms: true, qkNormScope: 'head' });
    const err = thrownLlmError(() =>
      getArchitecture('exaone4').config(
        meta('exaone4', { 'exaone4.attention.sliding_window_pattern': new Array<GgufValue>(3).fill(true) }, 64),
      ),
    );
    expect(err.code).toBe('gguf-invalid');
    expect(err.message).toContain("'exaone4.attention.sliding_window_pattern'");
  });
});
