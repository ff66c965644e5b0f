import { describe, expect, it } from 'vitest';
import type { GgufValue } from '../../../src/gguf/types.js';
import { readVisionConfig, SUPPORTED_PROJECTORS } from '../../../src/vision/vision-config.js';
import { thrownLlmError } from '../../helpers/llm-error.js';

/** A Gemma 3 mmproj's vision keys (SigLIP-so400m at 896², as the published conversion writes them). */
function gemma3Meta(over: Record<string, GgufValue | undefined> = {}): Record<string, GgufValue> {
  const meta: Record<string, GgufValue | undefined> = {
    'general.architecture': 'clip',
    'clip.has_vision_encoder': true,
    'clip.projector_type': 'gemma3',
    'clip.use_gelu': true,
    'clip.vision.image_size': 896,
    'clip.vision.patch_size': 14,
    'clip.vision.embedding_length': 1152,
    'clip.vision.feed_forward_length': 4304,
    'clip.vision.block_count': 27,
    'clip.vision.projection_dim': 2560,
    'clip.vision.attention.head_count': 16,
    'clip.vision.attention.layer_norm_epsilon': 1e-6,
    'clip.vision.image_mean': new Float32Array([0.5, 0.5, 0.5]),
    'clip.vision.image_std': new Float32Array([0.5, 0.5, 0.5]),
    ...over,
  };
  for (const k of Object.keys(meta)) if (meta[k] === undefined) delete meta[k];
  return meta as Record<string, GgufValue>;
}

describe('readVisionConfig', () => {
  it('reads a gemma3 mmproj', () => {
    const c = readVisionConfig(gemma3Meta());
    expect(c).toMatchObject({
      projector: 'gemma3',
      imageSize: 896,
      patchSize: 14,
      nEmbd: 1152,
      nFf: 4304,
      nLayers: 27,
      nHeads: 16,
      headDim: 72,
      projectionDim: 2560,
      imageMean: [0.5, 0.5, 0.5],
      imageStd: [0.5, 0.5, 0.5],
      ffn: 'gelu',
      merge: 4,
      resize: 'bilinear',
      imageBegin: '<start_of_image>',
    });
    expect(c.eps).toBe(Math.fround(1e-6));
  });

  it('takes the merge factor from the file when present and the activation from the flags', () => {
    const c = readVisionConfig(
      gemma3Meta({ 'clip.vision.projector.scale_factor': 2, 'clip.use_gelu': undefined, 'clip.vision.image_size': 56 }),
    );
    expect(c.merge).toBe(2);
    expect(c.ffn).toBe('gelu-quick');
  });

  it('reads the projector from clip.vision.projector_type in mixed-modality files', () => {
    const c = readVisionConfig(
      gemma3Meta({ 'clip.projector_type': undefined, 'clip.vision.projector_type': 'gemma3' }),
    );
    expect(c.projector).toBe('gemma3');
  });

  it('lists the supported projectors for an unknown one', () => {
    const e = thrownLlmError(() => readVisionConfig(gemma3Meta({ 'clip.projector_type': 'resampler' })));
    expect(e.code).toBe('unsupported-arch');
    expect(e.message).toContain("'resampler'");
    for (const p of SUPPORTED_PROJECTORS) expect(e.message).toContain(p);
  });

  const bad: [string, Record<string, GgufValue | undefined>, string][] = [
    ['no projector', { 'clip.projector_type': undefined }, 'clip.projector_type'],
    ['missing image size', { 'clip.vision.image_size': undefined }, 'clip.vision.image_size'],
    ['string patch size', { 'clip.vision.patch_size': '14' }, 'clip.vision.patch_size'],
    ['zero heads', { 'clip.vision.attention.head_count': 0 }, 'clip.vision.attention.head_count'],
    ['heads not dividing', { 'clip.vision.attention.head_count': 7 }, 'clip.vision.attention.head_count'],
    ['huge width', { 'clip.vision.embedding_length': 1e9 }, 'clip.vision.embedding_length'],
    ['huge layers', { 'clip.vision.block_count': 100000 }, 'clip.vision.block_count'],
    ['NaN eps', { 'clip.vision.attention.layer_norm_epsilon': Number.NaN }, 'layer_norm_epsilon'],
    ['image not patch-aligned', { 'clip.vision.image_size': 900 }, 'clip.vision.image_size'],
    ['two means', { 'clip.vision.image_mean': new Float32Array([0.5, 0.5]) }, 'clip.vision.image_mean'],
    ['zero std', { 'clip.vision.image_std': new Float32Array([0.5, 0, 0.5]) }, 'clip.vision.image_std'],
    ['missing std', { 'clip.vision.image_std': undefined }, 'clip.vision.image_std'],
    ['gelu and silu', { 'clip.use_silu': true }, 'clip.use_silu'],
    ['no vision encoder', { 'clip.has_vision_encoder': false }, 'clip.has_vision_encoder'],
    ['integer std', { 'clip.vision.image_std': new Int32Array([1, 1, 1]) }, 'clip.vision.image_std'],
    [
      'feature layer past the blocks',
      { 'clip.vision.feature_layer': new Int32Array([99]) },
      'clip.vision.feature_layer',
    ],
  ];
  it.each(bad)('%s is gguf-invalid naming the key', (_name, over, key) => {
    const e = thrownLlmError(() => readVisionConfig(gemma3Meta(over)));
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain(key);
  });
});
