/**
 * The bert encoder end to end on the CPU reference backend: `engine.embeddings.create` (with warmup) gives
 * llama.cpp's tokens and normalised vectors of the recorded cls fixture; what an encoder cannot do is a clear
 * `invalid-request` (logits, sampling, a start position, sequences longer than a step or the trained positions,
 * chat completions), not a crash; hostile headers are `gguf-invalid` naming the key or tensor.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/api/create-engine.js';
import type { Engine } from '../../../src/api/engine.js';
import { createCpuOps } from '../../../src/backend/cpu/cpu-ops.js';
import { parseGguf } from '../../../src/gguf/parse.js';
import type { GgufFile, GgufValue } from '../../../src/gguf/types.js';
import { NodeFileSource } from '../../../src/io/node-file-source.js';
import { loadAnyModel } from '../../../src/model/load-any.js';
import { loadTransformer } from '../../../src/model/load.js';
import { finishEmbedding } from '../../../src/model/pooling.js';
import { llmError } from '../../helpers/llm-error.js';
import { RECORDED_FIXTURE_DIR } from '../../helpers/shared-path.js';

const ID = 'bert-f32-embd-cls-noncausal-s1';
const MODEL = join(RECORDED_FIXTURE_DIR, `${ID}.gguf`);

interface Ref {
  readonly inputs: { readonly text: string; readonly tokens: number[]; readonly embedding: number[] }[];
}
const ref = (): Ref => JSON.parse(readFileSync(join(RECORDED_FIXTURE_DIR, `${ID}.embeddings.json`), 'utf8')) as Ref;

describe('bert through the engine', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({ model: MODEL, backend: 'cpu', contextLength: 64 });
  });
  afterAll(() => engine.unload());

  it("embeddings.create matches llama.cpp's tokens and normalised cls vectors, several lengths in one request", async () => {
    const { inputs } = ref();
    expect(engine.info.model).toMatchObject({ embeddingLength: 128, pooling: 'cls' });
    const r = await engine.embeddings.create({ input: inputs.map((i) => i.text) });
    inputs.forEach((input, i) => {
      const want = finishEmbedding(Float32Array.from(input.embedding), undefined, true);
      const got = r.data[i]!.embedding as number[];
      let maxAbs = 0;
      for (let j = 0; j < want.length; j++) maxAbs = Math.max(maxAbs, Math.abs(got[j]! - want[j]!));
      expect(maxAbs).toBeLessThanOrEqual(1e-3);
    });
    for (const input of inputs) expect(await engine.tokenize(input.text)).toEqual(input.tokens);
  });

  it('chat completions on an encoder are refused with invalid-request naming embeddings', async () => {
    const e = await llmError(engine.completions.create({ prompt: 'Hi', max_tokens: 2 }));
    expect(e.code).toBe('invalid-request');
    expect(e.message).toMatch(/encoder without an lm head/);
  });
});

describe('bert EncoderModel bad input', () => {
  let source: NodeFileSource;
  let gguf: GgufFile;
  beforeAll(async () => {
    source = await NodeFileSource.open(MODEL);
    gguf = await parseGguf(source);
  });
  afterAll(() => source.close());

  it('loadTransformer refuses an encoder and points at loadAnyModel', async () => {
    const e = await llmError(loadTransformer(gguf, source, createCpuOps(), { contextLength: 16 }));
    expect(e.code).toBe('invalid-request');
    expect(e.message).toMatch(/loadAnyModel/);
  });

  it('logits, sampling, offsets, too-long and out-of-vocabulary inputs are invalid-request; over the context is context-overflow', async () => {
    const model = await loadAnyModel(gguf, source, createCpuOps(), { contextLength: 16, ubatchSize: 8 });
    const ids = (n: number) => Int32Array.from({ length: n }, (_, i) => 1 + i);
    expect((await llmError(model.eval(ids(3), 0, 0, { logits: 'all' }))).code).toBe('invalid-request');
    expect((await llmError(model.readLogits())).code).toBe('invalid-request'); // nothing evaluated yet
    await model.eval(ids(3), 0, 0);
    expect(await model.readLogits()).toHaveLength(128); // the last token's hidden state (warmup reads it)
    expect((await llmError(model.argmax())).code).toBe('invalid-request');
    expect((await llmError(model.topK(3))).code).toBe('invalid-request');
    expect((await llmError(model.eval(ids(3), 2, 0))).message).toMatch(/from position 0/);
    expect((await llmError(model.hiddenStates(ids(9), 0))).message).toMatch(/sees a sequence whole/);
    expect((await llmError(model.hiddenStates(ids(17), 0))).code).toBe('context-overflow');
    expect((await llmError(model.hiddenStates(Int32Array.of(1, 512), 0))).message).toMatch(/outside the vocabulary/);
    expect((await llmError(model.hiddenStates(new Int32Array(0), 0))).message).toMatch(/empty/);
    expect((await llmError(model.hiddenStates(ids(2), 1))).message).toMatch(/slot 1 does not exist/);
    model.destroy();
  });

  const load = (edit: { meta?: Record<string, GgufValue | undefined>; tensors?: (f: GgufFile) => GgufFile }) => {
    const metadata: Record<string, GgufValue> = { ...gguf.metadata };
    for (const [k, v] of Object.entries(edit.meta ?? {})) {
      if (v === undefined) delete metadata[k];
      else metadata[k] = v;
    }
    const file = (edit.tensors ?? ((f) => f))({ ...gguf, metadata });
    return llmError(loadAnyModel(file, source, createCpuOps(), { contextLength: 16 }));
  };

  it('a missing or negative LayerNorm epsilon names the key', async () => {
    for (const v of [undefined, -1]) {
      const e = await load({ meta: { 'bert.attention.layer_norm_epsilon': v } });
      expect(e.code).toBe('gguf-invalid');
      expect(e.message).toContain('bert.attention.layer_norm_epsilon');
    }
  });

  it('block_count beyond the layers present, or token_embd of another width, names the key', async () => {
    const layers = await load({ meta: { 'bert.block_count': 4 } });
    expect(layers.code).toBe('gguf-invalid');
    expect(layers.message).toContain("'bert.block_count'");
    const width = await load({ meta: { 'bert.embedding_length': 64 } });
    expect(width.code).toBe('gguf-invalid');
    expect(width.message).toContain('bert.embedding_length');
  });

  it('a missing post-attention LayerNorm or a wrongly shaped position table names the tensor', async () => {
    const missing = await load({
      tensors: (f) => ({ ...f, tensors: f.tensors.filter((t) => t.name !== 'blk.1.attn_output_norm.weight') }),
    });
    expect(missing.code).toBe('gguf-invalid');
    expect(missing.message).toContain('blk.1.attn_output_norm.weight');
    const pos = await load({
      tensors: (f) => ({
        ...f,
        tensors: f.tensors.map((t) => (t.name === 'position_embd.weight' ? { ...t, shape: [64, 1024] } : t)),
      }),
    });
    expect(pos.code).toBe('gguf-invalid');
    expect(pos.message).toContain('position_embd.weight');
  });
});
