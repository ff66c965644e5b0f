/**
 * The vision encoder on the cpu reference and WASM backends vs llama.cpp mtmd (test/helpers/vit-ops-check.ts; WebGPU:
 * test/kernels/webgpu-vit-ops.gpu.test.ts).
 */

import v8 from 'node:v8';
import { describe, expect, it, vi } from 'vitest';
import { seedImage } from '../../scripts/synthetic/seed-image.mjs';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import { createWasmOps } from '../../src/backend/wasm/index.js';
import { MemoryByteSource } from '../../src/io/byte-source.js';
import { loadVisionEncoder } from '../../src/vision/vision-encoder.js';
import { expectLlmError } from '../helpers/llm-error.js';
import { describeVitOps } from '../helpers/vit-ops-check.js';
import { fixtureMmproj, visionFixtures } from '../unit/vision/vision-fixtures.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

describeVitOps('cpu', () => createCpuOps(), 1e-3);
describeVitOps('wasm', () => createWasmOps({ threads: 1 }), 1e-3);

describe('the vision encoder on a backend: bad input', () => {
  it('an mmproj for another text width is invalid-request naming both widths, and releases the backend', async () => {
    const fx = visionFixtures()[0]!;
    const { bytes } = await fixtureMmproj(fx);
    const ops = createCpuOps();
    const destroy = vi.spyOn(ops, 'destroy');
    const e = await expectLlmError(
      loadVisionEncoder(new MemoryByteSource(bytes), fx.shape.nEmbdText + 1, undefined, ops),
      'invalid-request',
    );
    expect(e.message).toContain(String(fx.shape.nEmbdText));
    expect(destroy).toHaveBeenCalled();
  });

  it('an abort between blocks stops the encode with aborted; the encoder then encodes the next image', async () => {
    const fx = visionFixtures()[0]!;
    const { bytes } = await fixtureMmproj(fx);
    const vision = await loadVisionEncoder(new MemoryByteSource(bytes), fx.shape.nEmbdText, undefined, createCpuOps());
    const controller = new AbortController();
    const image = seedImage(32, 32, 1);
    const pending = vision.encode(image, controller.signal);
    setTimeout(() => controller.abort(), 0);
    await expectLlmError(pending, 'aborted', /encoding the image/);
    expect(vision.encodedImages).toBe(0);
    const again = await vision.encode(image);
    expect(again.nTokens).toBe(fx.images[0]!.nTokens);
    vision.destroy();
  });
});
