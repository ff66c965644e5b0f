/**
 * Qwen3-VL's mmproj beyond the logits check (test/reference/image-logits.test.ts compares its embeddings and the
 * logits after the image with mtmd): each token's row carries the merger's output and one block per deepstack
 * merger (n_embd · (1 + k) wide), the image part counts its grid's tokens, no window pattern is needed, and rows of
 * another deepstack width do not fit the text model's grid (`invalid-request`).
 */

import { describe, expect, it } from 'vitest';
import { DEFAULT_QWEN3VL_MMPROJ, qwen3vlMmproj } from '../../../scripts/synthetic/mmproj-qwen3vl.js';
import { seedImage } from '../../../scripts/synthetic/seed-image.mjs';
import { parseGguf } from '../../../src/gguf/parse.js';
import { MemoryByteSource } from '../../../src/io/byte-source.js';
import { encodeImageParts } from '../../../src/vision/image-parts-layout.js';
import { readVisionConfig } from '../../../src/vision/vision-config.js';
import { loadVisionWeights } from '../../../src/vision/vision-weights.js';

describe('qwen3vl_merger', () => {
  it.each([0, 2])('rows of the merger and %i deepstack blocks, counted by the grid', async (deepstack) => {
    const bytes = qwen3vlMmproj(4, { ...DEFAULT_QWEN3VL_MMPROJ, nLayers: 2, nEmbdText: 64, deepstack });
    const gguf = await parseGguf(new MemoryByteSource(bytes));
    const config = readVisionConfig(gguf.metadata);
    expect([config.windowPattern, config.mrope]).toEqual([0, true]);
    const w = await loadVisionWeights(gguf, new MemoryByteSource(bytes), config, 64);
    const parts = await encodeImageParts(w, seedImage(96, 64, 3)); // 12 × 8 patches: 6 × 4 tokens
    const rows = parts.find((p) => p.type === 'rows');
    expect(rows?.type === 'rows' && [rows.nTokens, rows.grid, rows.embeddings.length]).toEqual([
      24,
      { nx: 6, ny: 4 },
      24 * 64 * (1 + deepstack),
    ]);
  });
});
