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
    // Pattern 0 is llama.cpp's "every layer slides" (set_swa_pattern), not "none".
    const allSliding = getArchitecture('exaone4').config(
      meta('exaone4', { 'exaone4.attention.sliding_window_pattern': 0 }, 64),
    );
    expect(allSliding.slidingLayers.every((s) => s)).toBe(true);
    const err = thrownLlmError(() =>
      getArchitecture('exaone4').config(
        meta('exaone4', { 'exaone4.attention.sliding_window_pattern': new Array<GgufValue>(3).fill(true) }, 64),
      ),
    );
    expect(err.code).toBe('gguf-invalid');
    expect(err.message).toContain("'exaone4.attention.sliding_window_pattern'");
  });

  it('hunyuan-dense: q/k norms after rope; rope.scaling.alpha raises the base to base · alpha^(d / (d − 2))', () => {
    const c = getArchitecture('hunyuan-dense').config(
      meta('hunyuan-dense', { 'hunyuan-dense.rope.scaling.alpha': 1000, 'hunyuan-dense.attention.key_length': 128 }),
    );
    expect(c).toMatchObject({ qkNorm: true, qkNormAfterRope: true, qkNormScope: 'head', ropeKind: 'neox' });
    expect(c.ropeTheta / (10000 * 1000 ** (128 / 126))).toBeCloseTo(1, 6);
    expect(getArchitecture('hunyuan-dense').config(meta('hunyuan-dense')).ropeTheta).toBe(10000);
    const err = thrownLlmError(() =>
      getArchitecture('hunyuan-dense').config(meta('hunyuan-dense', { 'hunyuan-dense.rope.scaling.alpha': 1e38 })),
    );
    expect(err.code).toBe('gguf-invalid');
    expect(err.message).toContain("'hunyuan-dense.rope.scaling.alpha'");
  });

  it('ernie4_5 ignores attn_output.bias; gemma scales embeddings by √n_embd and always ties the lm head', () => {
    expect(getArchitecture('ernie4_5').config(meta('ernie4_5'))).toMatchObject({
      attnOutBias: false,
      ropeKind: 'norm',
    });
    const g = getArchitecture('gemma').config(meta('gemma'));
    expect(g).toMatchObject({ alwaysTied: true, embeddingScale: 8, activation: 'gelu', ropeKind: 'neox' });
    expect(g.attentionScale).toBeCloseTo(1 / 4, 12);
  });

  it('mistral3: attention temperature from attention.temperature_scale over the original context', () => {
    const plain = getArchitecture('mistral3').config(meta('mistral3'));
    expect(plain.attnTemperature).toBeNull();
    const c = getArchitecture('mistral3').config(
      meta('mistral3', {
        'mistral3.attention.temperature_scale': 0.1,
        'mistral3.rope.scaling.type': 'yarn',
        'mistral3.rope.scaling.factor': 16,
        'mistral3.rope.scaling.original_context_length': 16384,
      }),
    );
    expect(c.attnTemperature).toEqual({ scale: 0.1, floor: 16384 });
    expect(c.ropeFreqScale).toBe(1 / 16);
    const err = thrownLlmError(() =>
      getArchitecture('mistral3').config(
        meta('mistral3', { 'mistral3.attention.temperature_scale': 0.1, 'mistral3.context_length': 0 }),
      ),
    );
    expect(err.code).toBe('gguf-invalid');
    expect(err.message).toContain("'mistral3.rope.scaling.original_context_length'");
  });
});
