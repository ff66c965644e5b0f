/**
 * The vision encoder on a backend (`src/vision/vit-ops.ts`) vs llama.cpp's mtmd: for every recorded mmproj of
 * test/fixtures/vision/*.json (F32 and F16 matrices, pre-LN, swapped FFN, patch 8 and 14, pooling 4 and 2) and each of
 * its images, the image embeddings within `limit` relative (max |Δ| / max |ref|), and the plain-TS oracle's embeddings
 * within the same bound. Each backend's test file calls `describeVitOps`.
 */

import { describe, expect, it } from 'vitest';
import { seedImage } from '../../scripts/synthetic/seed-image.mjs';
import type { Ops } from '../../src/backend/ops.js';
import { MemoryByteSource } from '../../src/io/byte-source.js';
import { readVisionConfig } from '../../src/vision/vision-config.js';
import { loadVisionEncoder } from '../../src/vision/vision-encoder.js';
import { vitOpsRuns } from '../../src/vision/vit-ops.js';
import { projectorFixtures, projectorMmproj } from '../unit/vision/projector-fixtures.js';
import { decodeF32, fixtureMmproj, visionFixtures } from '../unit/vision/vision-fixtures.js';
import { maxAbsDiff } from './compare.js';
import { expectLlmError } from './llm-error.js';

/** max |a − b| / max |b|. */
function relDiff(a: Float32Array, b: Float32Array): number {
  let ref = 0;
  for (const v of b) ref = Math.max(ref, Math.abs(v));
  return maxAbsDiff(a, b) / ref;
}

/** `limit`: the relative bound on this backend (1e-3 on f32 paths). */
export function describeVitOps(name: string, makeOps: () => Ops | Promise<Ops>, limit: number): void {
  describe(`${name}: the vision encoder vs llama.cpp mtmd`, () => {
    for (const fx of visionFixtures()) {
      it(`${fx.name}: image embeddings within ${limit} relative`, { timeout: 300_000 }, async () => {
        const { bytes } = await fixtureMmproj(fx);
        const ops = await makeOps();
        const vision = await loadVisionEncoder(new MemoryByteSource(bytes), fx.shape.nEmbdText, undefined, ops);
        const reference = await loadVisionEncoder(new MemoryByteSource(bytes), fx.shape.nEmbdText);
        expect(vision.backend).toBe(ops.name);
        try {
          for (const im of fx.images) {
            const image = seedImage(im.width, im.height, im.seed);
            const got = await vision.encode(image);
            const oracle = await reference.encode(image);
            expect(got.nTokens).toBe(im.nTokens);
            const err = relDiff(got.embeddings, decodeF32(im.embeddings));
            const errOracle = relDiff(got.embeddings, oracle.embeddings);
            console.log(
              `[vit-ops] ${name} ${fx.name} ${im.width}x${im.height}: rel err ${err.toExponential(2)} vs mtmd, ` +
                `${errOracle.toExponential(2)} vs the TS oracle`,
            );
            expect(err).toBeLessThan(limit);
            expect(errOracle).toBeLessThan(limit);
          }
        } finally {
          vision.destroy();
        }
      });
    }
  });
}

/**
 * The projectors beyond gemma3 on a backend (`vitOpsRuns`: idefics3, lfm2, mlp, ldp, pixtral, gemma4v, the Qwen-VL mergers) vs llama.cpp's mtmd: for
 * every recorded mmproj of test/fixtures/vision/projectors/*.json and each of its images, every image chunk's
 * embeddings (tiles and overview) within `limit` relative, the encoder running on the backend under test.
 */
export function describeProjectorOps(name: string, makeOps: () => Ops | Promise<Ops>, limit: number): void {
  describe(`${name}: projectors beyond gemma3 vs llama.cpp mtmd`, () => {
    for (const fx of projectorFixtures()) {
      it(`${fx.name}: every image chunk within ${limit} relative, encoded on ${name}`, {
        timeout: 600_000,
      }, async () => {
        const { bytes, gguf } = await projectorMmproj(fx);
        const ops = await makeOps();
        const vision = await loadVisionEncoder(new MemoryByteSource(bytes), fx.shape.nEmbdText, undefined, ops);
        try {
          expect(vitOpsRuns(readVisionConfig(gguf.metadata))).toBe(true);
          expect(vision.backend).toBe(ops.name);
          for (const im of fx.images) {
            if (im.refused) {
              await expectLlmError(vision.encode(seedImage(im.width, im.height, im.seed)), 'invalid-request');
              continue;
            }
            const got = await vision.encode(seedImage(im.width, im.height, im.seed));
            const rows = got.parts.flatMap((p) => (p.type === 'rows' ? [p] : []));
            expect(rows.map((r) => r.nTokens)).toEqual(im.chunks.map((c) => c.nTokens));
            let worst = 0;
            rows.forEach((r, i) => {
              const ref = im.chunks[i]!;
              const d = ref.nEmbd;
              const picked = ref.rows
                ? Float32Array.from(ref.rows.flatMap((k) => [...r.embeddings.subarray(k * d, (k + 1) * d)]))
                : r.embeddings;
              worst = Math.max(worst, relDiff(picked, decodeF32(ref.embeddings)));
            });
            console.log(
              `[vit-ops] ${name} ${fx.name} ${im.width}x${im.height}: worst chunk rel err ${worst.toExponential(2)}`,
            );
            expect(worst).toBeLessThan(limit);
          }
        } finally {
          vision.destroy();
        }
      });
    }
  });
}
