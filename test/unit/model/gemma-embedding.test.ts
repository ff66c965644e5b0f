/**
 * EmbeddingGemma (`gemma-embedding`) beyond the conformance suites (which also hold a fixture whose symmetric sliding
 * window is shorter than its inputs): the engine's embeddings.create applies the dense head (llama.cpp's vectors); a
 * file with only one of the dense layers is `gguf-invalid`.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/api/create-engine.js';
import { createCpuOps } from '../../../src/backend/cpu/cpu-ops.js';
import { parseGguf } from '../../../src/gguf/parse.js';
import type { GgufFile } from '../../../src/gguf/types.js';
import { NodeFileSource } from '../../../src/io/node-file-source.js';
import { loadAnyModel } from '../../../src/model/load-any.js';
import { finishEmbedding } from '../../../src/model/pooling.js';
import { llmError } from '../../helpers/llm-error.js';
import { RECORDED_FIXTURE_DIR } from '../../helpers/shared-path.js';

const ID = 'gemma-embedding-f32-embd-mean-noncausal-s1';
const MODEL = join(RECORDED_FIXTURE_DIR, `${ID}.gguf`);

describe('gemma-embedding', () => {
  let source: NodeFileSource;
  let gguf: GgufFile;
  beforeAll(async () => {
    source = await NodeFileSource.open(MODEL);
    gguf = await parseGguf(source);
  });
  afterAll(() => source.close());

  it("embeddings.create gives llama.cpp's vectors (dense head applied after pooling)", async () => {
    const ref = JSON.parse(readFileSync(join(RECORDED_FIXTURE_DIR, `${ID}.embeddings.json`), 'utf8')) as {
      inputs: { text: string; embedding: number[] }[];
    };
    const engine = await createEngine({ model: MODEL, backend: 'cpu', contextLength: 64 });
    try {
      const r = await engine.embeddings.create({ input: ref.inputs.map((i) => i.text) });
      ref.inputs.forEach((input, i) => {
        const want = finishEmbedding(Float32Array.from(input.embedding), undefined, true);
        const got = r.data[i]!.embedding as number[];
        for (let j = 0; j < want.length; j++) expect(Math.abs(got[j]! - want[j]!)).toBeLessThanOrEqual(1e-3);
      });
    } finally {
      await engine.unload();
    }
  });

  it('reads the dense head (n_embd → 256 → n_embd) beside the decoder', async () => {
    const model = await loadAnyModel(gguf, source, createCpuOps(), { contextLength: 16 });
    expect(model.pooledProjection?.mid).toBe(256);
    expect(model.pooledProjection?.dense2).toHaveLength(256 * 128);
    model.destroy();
  });

  it('dense_2 without dense_3 is gguf-invalid naming the missing tensor', async () => {
    const file = { ...gguf, tensors: gguf.tensors.filter((t) => t.name !== 'dense_3.weight') };
    const e = await llmError(loadAnyModel(file, source, createCpuOps(), { contextLength: 16 }));
    expect(e.code).toBe('gguf-invalid');
    expect(e.details?.tensor).toBe('dense_3.weight');
  });
});
