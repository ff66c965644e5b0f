/**
 * An image step of a qwen3vl model (deepstack layers) on WebGPU, both capability paths: the deepstack blocks are
 * written once when the step begins (src/model/step-input.ts), so the step is as many submissions as a text step of
 * as many tokens (a write per deepstack layer ended the submission before), and its logits equal the cpu backend's —
 * also when the image spans two steps (ubatch 4 < 6 rows: each step takes its own rows of every block).
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import type { Ops } from '../../src/backend/ops.js';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { MemoryByteSource } from '../../src/io/byte-source.js';
import { loadTransformer } from '../../src/model/load.js';
import { maxAbsDiff } from '../helpers/compare.js';
import { destroyTestGpu, GPU_VARIANTS, getTestDevice } from '../helpers/gpu.js';
import { RECORDED_FIXTURE_DIR } from '../helpers/shared-path.js';

afterAll(() => destroyTestGpu());

const bytes = readFileSync(join(RECORDED_FIXTURE_DIR, 'qwen3vl-q8_0-s1.gguf'));

/** Logits after text, a 3 × 2 image (deepstack-wide rows) and text; `count` brackets the image and a text step. */
async function run(ops: Ops, ubatchSize: number, count?: (what: 'image' | 'text') => () => number) {
  const source = new MemoryByteSource(bytes, 'qwen3vl');
  const model = await loadTransformer(await parseGguf(source), source, ops, { contextLength: 64, ubatchSize });
  try {
    const width = model.config.embeddingLength * (1 + (model.config.deepstackLayers ?? 0));
    expect(model.config.deepstackLayers).toBeGreaterThan(0);
    const rows = Float32Array.from({ length: 6 * width }, (_, i) => Math.sin(i * 0.37) * 0.2); // [6, nEmbd·(1+k)]
    await model.eval(Int32Array.of(1, 5), 0, 0, { logits: 'last' });
    await model.readLogits(); // everything before the image is submitted
    const image = count?.('image');
    await model.evalEmbeddings!(rows, 2, 0, { logits: 'last', grid: { nx: 3, ny: 2 } });
    const imageLogits = await model.readLogits();
    const imageSubmissions = image?.();
    const text = count?.('text');
    await model.eval(Int32Array.of(7, 8, 9, 10, 11, 12), 8, 0, { logits: 'last' });
    const logits = await model.readLogits();
    return { imageLogits, logits, imageSubmissions, textSubmissions: text?.() };
  } finally {
    model.destroy(); // and its backend
  }
}

for (const variant of GPU_VARIANTS) {
  describe(`webgpu ${variant.name}: an image step with deepstack layers (qwen3vl)`, () => {
    it('is one step like text and gives the cpu backend logits', { timeout: 120_000 }, async () => {
      const device = await getTestDevice(['shader-f16', 'subgroups']);
      const tol = variant.preferF16 ? 5e-2 : 2e-3;
      for (const ubatch of [8, 4]) {
        const want = await run(createCpuOps(), ubatch);
        const gpu = await createWebGpuOps({ device, preferF16: variant.preferF16, useSubgroups: variant.useSubgroups });
        const got = await run(gpu, ubatch, () => {
          const s0 = gpu.stats.submissions;
          return () => gpu.stats.submissions - s0;
        });
        expect(maxAbsDiff(got.imageLogits, want.imageLogits), `image, ubatch ${ubatch}`).toBeLessThan(tol);
        expect(maxAbsDiff(got.logits, want.logits), `text after it, ubatch ${ubatch}`).toBeLessThan(tol);
        if (ubatch === 8) expect(got.imageSubmissions, 'image step submissions').toBe(got.textSubmissions);
      }
    });
  });
}
