import { describe, expect, it } from 'vitest';
import { gemma3Mmproj } from '../../../scripts/synthetic/mmproj-gemma3.js';
import { seedImage } from '../../../scripts/synthetic/seed-image.mjs';
import { MemoryByteSource } from '../../../src/io/byte-source.js';
import { loadVisionEncoder } from '../../../src/vision/vision-encoder.js';
import { expectLlmError } from '../../helpers/llm-error.js';
import { decodeF32, visionFixtures } from './vision-fixtures.js';

describe('loadVisionEncoder', () => {
  const fx = visionFixtures()[0];
  const im = fx.images[1];

  it('encodes RGB pixels to the recorded embeddings and keys them by content', async () => {
    const enc = await loadVisionEncoder(new MemoryByteSource(gemma3Mmproj(fx.seed, fx.shape)), fx.shape.nEmbdText);
    const a = await enc.encode(seedImage(im.width, im.height, im.seed));
    expect(a.nTokens).toBe(im.nTokens);
    const ref = decodeF32(im.embeddings);
    for (let i = 0; i < ref.length; i++) expect(Math.abs(a.embeddings[i] - ref[i])).toBeLessThan(1e-3);
    const again = await enc.encode(seedImage(im.width, im.height, im.seed));
    const other = await enc.encode(seedImage(im.width, im.height, im.seed + 1));
    expect(again.hash).toBe(a.hash);
    expect(other.hash).not.toBe(a.hash);
    // Same bytes, other shape: another image.
    const flipped = seedImage(im.width, im.height, im.seed);
    const transposed = await enc.encode({ width: flipped.height, height: flipped.width, data: flipped.data });
    expect(transposed.hash).not.toBe(a.hash);
    // The same pixels are never encoded twice: 3 encodes for 4 calls, the repeat served from the kept images.
    expect(enc.encodedImages).toBe(3);
    expect(again.embeddings).toBe(a.embeddings);
  });

  it('an aborted encode rejects with aborted', async () => {
    const enc = await loadVisionEncoder(new MemoryByteSource(gemma3Mmproj(fx.seed, fx.shape)), fx.shape.nEmbdText);
    await expectLlmError(enc.encode(seedImage(8, 8, 1), AbortSignal.abort()), 'aborted');
  });
});
