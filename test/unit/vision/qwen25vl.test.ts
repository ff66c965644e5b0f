/**
 * Qwen2.5-VL's mmproj beyond the embeddings (test/unit/vision/projectors.test.ts checks those against mtmd): the image
 * rows carry their merged grid (the text model's M-RoPE places them by it) between <|vision_start|> and
 * <|vision_end|>; bad files — no `n_wa_pattern`, another merge, a head size not divisible by 4, merger matrices that
 * do not fit 4 × the ViT width — are `gguf-invalid` naming what is wrong.
 */

import { describe, expect, it } from 'vitest';
import { DEFAULT_QWEN25VL_MMPROJ, qwen25vlMmproj } from '../../../scripts/synthetic/mmproj-qwen25vl.js';
import { seedImage } from '../../../scripts/synthetic/seed-image.mjs';
import { parseGguf } from '../../../src/gguf/parse.js';
import type { GgufValue } from '../../../src/gguf/types.js';
import { MemoryByteSource } from '../../../src/io/byte-source.js';
import { encodeImageParts } from '../../../src/vision/image-parts-layout.js';
import { readVisionConfig } from '../../../src/vision/vision-config.js';
import { loadVisionWeights } from '../../../src/vision/vision-weights.js';
import { expectLlmError, thrownLlmError } from '../../helpers/llm-error.js';

const shape = { ...DEFAULT_QWEN25VL_MMPROJ, nLayers: 1, nEmbdText: 64 };

async function mmproj(): Promise<{ bytes: Uint8Array; meta: Record<string, GgufValue> }> {
  const bytes = qwen25vlMmproj(3, shape);
  const gguf = await parseGguf(new MemoryByteSource(bytes));
  return { bytes, meta: { ...gguf.metadata } };
}

describe('qwen2.5vl_merger', () => {
  it('image rows carry their merged grid, framed by <|vision_start|> … <|vision_end|>', async () => {
    const { bytes } = await mmproj();
    const gguf = await parseGguf(new MemoryByteSource(bytes));
    const config = readVisionConfig(gguf.metadata);
    expect(config.windowPattern).toBe(3);
    const w = await loadVisionWeights(gguf, new MemoryByteSource(bytes), config, 64);
    const parts = await encodeImageParts(w, seedImage(160, 96, 5));
    expect(parts.map((p) => p.type)).toEqual(['text', 'rows', 'text']);
    expect(parts[0]).toEqual({ type: 'text', text: '<|vision_start|>' });
    const rows = parts[1]!;
    expect(rows.type === 'rows' && rows.grid).toEqual({ nx: 10, ny: 6 });
    expect(rows.type === 'rows' && rows.nTokens).toBe(60);
  });

  it.each([
    ['no n_wa_pattern', { 'clip.vision.n_wa_pattern': undefined }, /n_wa_pattern/],
    ['merge 3', { 'clip.vision.spatial_merge_size': 3 }, /spatial_merge_size/],
    ['head size 6', { 'clip.vision.attention.head_count': 16, 'clip.vision.embedding_length': 96 }, /divisible by 4/],
  ])('%s is gguf-invalid', async (_, edit, message) => {
    const { meta } = await mmproj();
    for (const [k, v] of Object.entries(edit)) {
      if (v === undefined) delete meta[k];
      else meta[k] = v;
    }
    const e = thrownLlmError(() => readVisionConfig(meta));
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toMatch(message);
  });

  it('merger matrices that do not fit 4 × the ViT width are gguf-invalid naming the tensor', async () => {
    const { bytes } = await mmproj();
    const gguf = await parseGguf(new MemoryByteSource(bytes));
    const config = { ...readVisionConfig(gguf.metadata), nEmbd: 48, headDim: 12 };
    await expectLlmError(loadVisionWeights(gguf, new MemoryByteSource(bytes), config, 64), 'gguf-invalid', /weight/);
    const mm0 = gguf.tensors.find((t) => t.name === 'mm.0.weight')!;
    const bad = {
      ...gguf,
      tensors: gguf.tensors.map((t) => (t === mm0 ? { ...t, shape: [mm0.shape[0]! / 2, mm0.shape[1]! * 2] } : t)),
    };
    await expectLlmError(
      loadVisionWeights(bad, new MemoryByteSource(bytes), readVisionConfig(gguf.metadata), 64),
      'gguf-invalid',
      /mm\.0\.weight/,
    );
  });
});
