/**
 * A Qwen-VL encode on WebGPU reads back only what leaves the device: the vision rope runs on the backend
 * (`qwenVisionRope`, a multi-stream rope), so no block reads q and k back to rotate them on the host — the bytes read
 * are the last block's output [n, d] and the merger's rows [n/4, nEmbdText], plus one [n, d] per deepstack merger
 * (qwen3vl) and its rows. Before, every block added 2 · n · d f32 and two submissions.
 */

import { afterAll, describe, expect, it } from 'vitest';
import { seedImage } from '../../scripts/synthetic/seed-image.mjs';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { MemoryByteSource } from '../../src/io/byte-source.js';
import { preprocessImage } from '../../src/vision/preprocess-image.js';
import { readVisionConfig } from '../../src/vision/vision-config.js';
import { loadVitOps } from '../../src/vision/vit-ops.js';
import { destroyTestGpu, getTestDevice } from '../helpers/gpu.js';
import { projectorFixtures, projectorMmproj } from '../unit/vision/projector-fixtures.js';

afterAll(() => destroyTestGpu());

describe('webgpu: a Qwen-VL encode reads back only its outputs', () => {
  for (const name of ['qwen25vl-s1', 'qwen3vl-s1']) {
    it(name, { timeout: 120_000 }, async () => {
      const fx = projectorFixtures().find((f) => f.name === name)!;
      const { bytes, gguf } = await projectorMmproj(fx);
      const device = await getTestDevice(['shader-f16', 'subgroups']);
      const ops = await createWebGpuOps({ device, preferF16: false, useSubgroups: false });
      const config = readVisionConfig(gguf.metadata);
      const nt = fx.shape.nEmbdText;
      const vit = await loadVitOps(gguf, new MemoryByteSource(bytes), ops, config, nt);
      try {
        const { width, height, seed } = fx.images[0]!;
        const img = preprocessImage(seedImage(width, height, seed), config);
        const n = (img.size / config.patchSize) * ((img.height ?? img.size) / config.patchSize);
        const before = ops.stats.bytesRead;
        const out = await vit.encode(img);
        const mergers = out.length / ((n / 4) * nt); // 1 + deepstack mergers
        expect(Number.isInteger(mergers)).toBe(true);
        expect(ops.stats.bytesRead - before).toBe(mergers * (n * config.nEmbd + (n / 4) * nt) * 4);
      } finally {
        vit.destroy();
        ops.destroy();
      }
    });
  }
});
