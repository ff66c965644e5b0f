import { describe, expect, it } from 'vitest';
import { seedImage } from '../../../scripts/synthetic/seed-image.mjs';
import { MemoryByteSource } from '../../../src/io/byte-source.js';
import { preprocessImage } from '../../../src/vision/preprocess-image.js';
import { encodeImage } from '../../../src/vision/siglip-encoder.js';
import { readVisionConfig } from '../../../src/vision/vision-config.js';
import { loadVisionWeights } from '../../../src/vision/vision-weights.js';
import { expectLlmError } from '../../helpers/llm-error.js';
import { decodeF32, fixtureMmproj, visionFixtures } from './vision-fixtures.js';

/** Largest |a − b| over the largest |b|: the relative error of a whole embedding block. */
function relError(a: Float32Array, b: Float32Array): number {
  let diff = 0;
  let scale = 0;
  for (let i = 0; i < b.length; i++) {
    diff = Math.max(diff, Math.abs(a[i] - b[i]));
    scale = Math.max(scale, Math.abs(b[i]));
  }
  return diff / scale;
}

describe('encodeImage (SigLIP + gemma3 projector, cpu reference) against llama.cpp mtmd', () => {
  for (const fx of visionFixtures()) {
    it(`${fx.name}: image embeddings within 1e-3 relative`, async () => {
      const { bytes, gguf } = await fixtureMmproj(fx);
      const config = readVisionConfig(gguf.metadata);
      const weights = await loadVisionWeights(gguf, new MemoryByteSource(bytes), config, fx.shape.nEmbdText);
      for (const im of fx.images) {
        const emb = encodeImage(weights, preprocessImage(seedImage(im.width, im.height, im.seed), config));
        const ref = decodeF32(im.embeddings);
        expect(emb.length).toBe(im.nTokens * im.nEmbd);
        const err = relError(emb, ref);
        console.log(`${fx.name} ${im.width}x${im.height}: rel err ${err.toExponential(2)}`);
        expect(err).toBeLessThan(1e-3);
      }
    });
  }

  it('an mmproj for another text width is invalid-request naming both widths', async () => {
    const fx = visionFixtures()[0];
    const { bytes, gguf } = await fixtureMmproj(fx);
    const config = readVisionConfig(gguf.metadata);
    const e = await expectLlmError(
      loadVisionWeights(gguf, new MemoryByteSource(bytes), config, fx.shape.nEmbdText + 1),
      'invalid-request',
    );
    expect(e.message).toContain(String(fx.shape.nEmbdText));
  });

  it('a tensor of the wrong shape is gguf-invalid naming it', async () => {
    const fx = visionFixtures()[0];
    const { bytes, gguf } = await fixtureMmproj(fx);
    const config = { ...readVisionConfig(gguf.metadata), nFf: fx.shape.nFf + 1 };
    await expectLlmError(
      loadVisionWeights(gguf, new MemoryByteSource(bytes), config, fx.shape.nEmbdText),
      'gguf-invalid',
      /v\.blk\.0\.ffn_up\.weight/,
    );
  });
});
