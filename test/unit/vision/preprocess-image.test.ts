import { describe, expect, it } from 'vitest';
import { seedImage } from '../../../scripts/synthetic/seed-image.mjs';
import { MAX_IMAGE_SIDE, preprocessImage } from '../../../src/vision/preprocess-image.js';
import { readVisionConfig } from '../../../src/vision/vision-config.js';
import { thrownLlmError } from '../../helpers/llm-error.js';
import { fixtureMmproj, sha256, visionFixtures } from './vision-fixtures.js';

describe('preprocessImage (gemma3, fixed size) against llama.cpp mtmd', () => {
  for (const fx of visionFixtures()) {
    for (const im of fx.images) {
      it(`${fx.name}: ${im.width}×${im.height} is bit-identical to llama.cpp's inp_raw`, async () => {
        const { gguf } = await fixtureMmproj(fx);
        const config = readVisionConfig(gguf.metadata);
        const out = preprocessImage(seedImage(im.width, im.height, im.seed), config);
        expect([out.size, out.size, 3, 1]).toEqual(im.preprocessed.ne);
        for (const [i, v] of im.preprocessed.samples) expect(out.pixels[i], `element ${i}`).toBe(v);
        expect(sha256(out.pixels)).toBe(im.preprocessed.sha256);
      });
    }
  }
});

describe('preprocessImage bad input', () => {
  it('rejects zero, fractional and huge sides and short data as invalid-request', async () => {
    const fx = visionFixtures()[0];
    const config = readVisionConfig((await fixtureMmproj(fx)).gguf.metadata);
    const cases = [
      { width: 0, height: 4, data: new Uint8Array(0) },
      { width: 2.5, height: 4, data: new Uint8Array(30) },
      { width: MAX_IMAGE_SIDE + 1, height: 1, data: new Uint8Array(0) },
      { width: 4, height: 4, data: new Uint8Array(47) },
    ];
    for (const img of cases) {
      const e = thrownLlmError(() => preprocessImage(img, config));
      expect(e.code).toBe('invalid-request');
    }
  });
});
