import { describe, expect, it } from 'vitest';
import { DEFAULT_GEMMA4V_MMPROJ, gemma4vMmproj } from '../../../scripts/synthetic/mmproj-gemma4v.js';
import { seedImage } from '../../../scripts/synthetic/seed-image.mjs';
import { createCpuOps } from '../../../src/backend/cpu/cpu-ops.js';
import { MemoryByteSource } from '../../../src/io/byte-source.js';
import { encodeImageParts } from '../../../src/vision/image-parts-layout.js';
import { type PreprocessedImage, preprocessImage } from '../../../src/vision/preprocess-image.js';
import { preprocessDynamic, preprocessSmartResize } from '../../../src/vision/preprocess-smart-resize.js';
import { preprocessTiles } from '../../../src/vision/preprocess-tiles.js';
import { readVisionConfig } from '../../../src/vision/vision-config.js';
import { loadVisionEncoder } from '../../../src/vision/vision-encoder.js';
import { loadVisionWeights } from '../../../src/vision/vision-weights.js';
import { expectLlmError, thrownLlmError } from '../../helpers/llm-error.js';
import { projectorFixtures, projectorMmproj } from './projector-fixtures.js';
import { decodeF32, sha256 } from './vision-fixtures.js';

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

describe('projectors beyond gemma3 against llama.cpp mtmd (cpu reference)', () => {
  for (const fx of projectorFixtures()) {
    for (const im of fx.images.filter((m) => m.refused)) {
      it(`${fx.name}: ${im.width}×${im.height}, which mtmd refuses, is invalid-request`, async () => {
        const { bytes, gguf } = await projectorMmproj(fx);
        const config = readVisionConfig(gguf.metadata);
        const weights = await loadVisionWeights(gguf, new MemoryByteSource(bytes), config, fx.shape.nEmbdText);
        await expectLlmError(encodeImageParts(weights, seedImage(im.width, im.height, im.seed)), 'invalid-request');
      });
    }
    for (const im of fx.images.filter((m) => !m.refused)) {
      it(`${fx.name}: ${im.width}×${im.height} preprocesses bit-identically to each of mtmd's chunks`, async () => {
        const config = readVisionConfig((await projectorMmproj(fx)).gguf.metadata);
        const img = seedImage(im.width, im.height, im.seed);
        const t =
          config.preprocessor === 'lfm2'
            ? preprocessSmartResize(img, config)
            : config.preprocessor === 'idefics3'
              ? preprocessTiles(img, config)
              : config.preprocessor === 'dynamic'
                ? { tiles: [], overview: preprocessDynamic(img, config) }
                : { tiles: [], overview: preprocessImage(img, config) };
        // gemma4v maps pixels to [−1, 1] in its graph (ggml_scale_bias); mtmd's recorded input is after it.
        const scaled = (q: PreprocessedImage) =>
          config.projector === 'gemma4v' ? { ...q, pixels: q.pixels.map((v) => Math.fround(v * 2 - 1)) } : q;
        const inputs = [...t.tiles, t.overview].map(scaled);
        expect(inputs.length).toBe(im.chunks.length);
        inputs.forEach((got, i) => {
          const ref = im.chunks[i].preprocessed;
          expect([got.size, got.height ?? got.size, 3, 1]).toEqual(ref.ne);
          for (const [k, v] of ref.samples) expect(got.pixels[k], `chunk ${i} element ${k}`).toBe(v);
          expect(sha256(got.pixels), `chunk ${i}`).toBe(ref.sha256);
        });
      });
    }

    it(`${fx.name}: image embeddings of every chunk within 1e-3 relative`, { timeout: 600_000 }, async () => {
      const { bytes, gguf } = await projectorMmproj(fx);
      const config = readVisionConfig(gguf.metadata);
      const weights = await loadVisionWeights(gguf, new MemoryByteSource(bytes), config, fx.shape.nEmbdText);
      for (const im of fx.images.filter((m) => !m.refused)) {
        const parts = await encodeImageParts(weights, seedImage(im.width, im.height, im.seed));
        const rows = parts.flatMap((p) => (p.type === 'rows' ? [p] : []));
        expect(rows.map((r) => r.nTokens)).toEqual(im.chunks.map((c) => c.nTokens));
        let worst = 0;
        rows.forEach((r, i) => {
          const ref = im.chunks[i];
          const d = ref.nEmbd;
          const got = ref.rows
            ? Float32Array.from(ref.rows.flatMap((k) => [...r.embeddings.subarray(k * d, (k + 1) * d)]))
            : r.embeddings;
          worst = Math.max(worst, relError(got, decodeF32(ref.embeddings)));
        });
        console.log(
          `${fx.name} ${im.width}x${im.height}: ${rows.length} chunks, worst rel err ${worst.toExponential(2)}`,
        );
        expect(worst).toBeLessThan(1e-3);
      }
    });
  }

  it("idefics3: scale factor and longest edge come from the file; without 'preproc_image_size' it is unsupported-arch", async () => {
    const fx = projectorFixtures().find((f) => f.projector === 'idefics3')!;
    const meta = { ...(await projectorMmproj(fx)).gguf.metadata };
    const config = readVisionConfig(meta);
    expect([config.merge, config.longestEdge, config.resize, config.nonCausal]).toEqual([
      fx.shape.merge,
      fx.shape.longestEdge,
      'lanczos',
      false,
    ]);
    delete meta['clip.vision.preproc_image_size'];
    expect(thrownLlmError(() => readVisionConfig(meta)).code).toBe('unsupported-arch');
  });

  it('gemma4v image rows are non-causal except for the E2B/E4B text widths (mtmd_decode_use_non_causal)', async () => {
    for (const [width, nonCausal] of [
      [1536, false],
      [2560, false],
      [256, true],
    ] as const) {
      const bytes = gemma4vMmproj(1, { ...DEFAULT_GEMMA4V_MMPROJ, nEmbdText: width, nLayers: 1 });
      const enc = await loadVisionEncoder(new MemoryByteSource(bytes), width);
      expect([width, enc.config.nonCausal]).toEqual([width, nonCausal]);
    }
  });

  it('a gemma4v patch grid beyond its position tables is invalid-request naming them (llama.cpp aborts), on the reference and on a backend', async () => {
    // 1000×3 → 153 × 1 patches after the dynamic resize; the synthetic tables hold 64 a side.
    const bytes = gemma4vMmproj(5, { ...DEFAULT_GEMMA4V_MMPROJ, nLayers: 1 });
    for (const ops of [undefined, createCpuOps()]) {
      const enc = await loadVisionEncoder(
        new MemoryByteSource(bytes),
        DEFAULT_GEMMA4V_MMPROJ.nEmbdText,
        undefined,
        ops,
      );
      try {
        for (const [w, h] of [
          [1000, 3],
          [3, 1000],
        ]) {
          await expectLlmError(enc.encode(seedImage(w, h, 1)), 'invalid-request', /position tables \(64 a side/);
        }
        expect((await enc.encode(seedImage(100, 60, 1))).parts.length).toBeGreaterThan(0);
      } finally {
        enc.destroy();
      }
    }
  });

  it("an ldp mmproj whose patch grid is not llama.cpp's hard-coded 24×24 is unsupported-arch naming the grid", async () => {
    const fx = projectorFixtures().find((f) => f.projector === 'ldp')!;
    const { bytes, gguf } = await projectorMmproj(fx);
    const config = { ...readVisionConfig(gguf.metadata), imageSize: fx.shape.imageSize + fx.shape.patchSize };
    await expectLlmError(
      loadVisionWeights(gguf, new MemoryByteSource(bytes), config, fx.shape.nEmbdText),
      'unsupported-arch',
      /24×24.*25×25/,
    );
  });

  it("an mlp mmproj with Yi-VL's mm.3 (mlp_norm) is unsupported-arch, not run as plain mlp", async () => {
    const fx = projectorFixtures().find((f) => f.projector === 'mlp')!;
    const { bytes, gguf } = await projectorMmproj(fx);
    const config = readVisionConfig(gguf.metadata);
    const extra = { ...gguf.tensors[0], name: 'mm.3.weight' };
    await expectLlmError(
      loadVisionWeights({ ...gguf, tensors: [...gguf.tensors, extra] }, new MemoryByteSource(bytes), config, 64),
      'unsupported-arch',
      /mlp_norm/,
    );
  });

  it('an mmproj of any projector for another text width is invalid-request naming the projector and both widths', async () => {
    const seen = new Set<string>();
    for (const fx of projectorFixtures()) {
      if (seen.has(fx.projector)) continue;
      seen.add(fx.projector);
      const { bytes, gguf } = await projectorMmproj(fx);
      const config = readVisionConfig(gguf.metadata);
      const e = await expectLlmError(
        loadVisionWeights(gguf, new MemoryByteSource(bytes), config, fx.shape.nEmbdText * 2),
        'invalid-request',
      );
      expect(e.message).toContain(`'${fx.projector}'`);
      expect(e.message).toMatch(new RegExp(`${fx.shape.nEmbdText}\\D.*${fx.shape.nEmbdText * 2}`));
    }
    expect([...seen].sort()).toEqual([
      'gemma3',
      'gemma4v',
      'idefics3',
      'ldp',
      'lfm2',
      'mlp',
      'pixtral',
      'qwen2.5vl_merger',
      'qwen3vl_merger',
    ]);
  });

  it('an idefics3 fc matrix that does not fit the ViT width × merge² is gguf-invalid naming it', async () => {
    const fx = projectorFixtures().find((f) => f.projector === 'idefics3')!;
    const { bytes, gguf } = await projectorMmproj(fx);
    const config = { ...readVisionConfig(gguf.metadata), merge: fx.shape.merge + 1 };
    await expectLlmError(
      loadVisionWeights(gguf, new MemoryByteSource(bytes), config, fx.shape.nEmbdText),
      'gguf-invalid',
      /mm\.model\.fc\.weight/,
    );
  });
});
