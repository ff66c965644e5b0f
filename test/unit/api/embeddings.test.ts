/**
 * `engine.embeddings.create` on a recorded qwen3 embedding fixture (last pooling, f32 weights; CPU reference
 * backend): the engine's tokens and vectors match llama.cpp's embedding path, the OpenAI response shape, Matryoshka
 * `dimensions`, `normalize: false`, base64, token-array input, bad input, truncation, the worker path, and that an
 * embeddings request leaves chat generation unaffected.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/api/create-engine.js';
import type { Engine } from '../../../src/api/engine.js';
import { isLlmError } from '../../../src/errors.js';
import { finishEmbedding } from '../../../src/model/pooling.js';
import { connectWorkerEngine } from '../../../src/worker/client.js';
import { createWorkerApi } from '../../../src/worker/worker-api.js';
import { RECORDED_FIXTURE_DIR, sharedPath } from '../../helpers/shared-path.js';
import { useChannels } from '../worker/worker-harness.js';

const ID = 'qwen3-f32-embd-last-s5';
const MODEL = join(RECORDED_FIXTURE_DIR, `${ID}.gguf`);

interface Ref {
  readonly inputs: { readonly text: string; readonly tokens: number[]; readonly embedding: number[] }[];
}
const ref = (): Ref => JSON.parse(readFileSync(join(RECORDED_FIXTURE_DIR, `${ID}.embeddings.json`), 'utf8')) as Ref;

const maxAbs = (a: ArrayLike<number>, b: ArrayLike<number>): number => {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
};

async function expectInvalid(p: Promise<unknown>, pattern: RegExp): Promise<void> {
  const e = await p.then(
    () => null,
    (x: unknown) => x,
  );
  expect(isLlmError(e, 'invalid-request'), String(e)).toBe(true);
  expect((e as Error).message).toMatch(pattern);
}

describe('embeddings.create (qwen3, last pooling)', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({ model: MODEL, backend: 'cpu', contextLength: 40, warmup: false });
  });
  afterAll(() => engine.unload());

  it("matches llama.cpp's tokens and pooled vectors, several inputs of different lengths in one request", async () => {
    const { inputs } = ref();
    expect(engine.info.model).toMatchObject({ embeddingLength: 128, pooling: 'last' });
    const r = await engine.embeddings.create({ input: inputs.map((i) => i.text) });
    expect(r.object).toBe('list');
    expect(r.data.map((d) => d.index)).toEqual(inputs.map((_, i) => i));
    const nTokens = inputs.reduce((s, i) => s + i.tokens.length, 0);
    expect(r.usage).toEqual({ prompt_tokens: nTokens, total_tokens: nTokens });
    inputs.forEach((input, i) => {
      const want = finishEmbedding(Float32Array.from(input.embedding), undefined, true);
      const got = r.data[i]!.embedding as number[];
      expect(got).toHaveLength(128);
      expect(maxAbs(got, want)).toBeLessThanOrEqual(1e-3);
    });
    for (const input of inputs) expect(await engine.tokenize(input.text)).toEqual(input.tokens);
  });

  it('dimensions truncates and re-normalises; normalize: false gives the raw pooled vector; base64 = float', async () => {
    const input = ref().inputs[1]!;
    const [short] = (await engine.embeddings.create({ input: input.text, dimensions: 32 })).data;
    const want = finishEmbedding(Float32Array.from(input.embedding), 32, true);
    expect(maxAbs(short!.embedding as number[], want)).toBeLessThanOrEqual(1e-3);
    expect(Math.hypot(...(short!.embedding as number[]))).toBeCloseTo(1, 5);
    const [raw] = (await engine.embeddings.create({ input: input.text, normalize: false })).data;
    expect(maxAbs(raw!.embedding as number[], input.embedding)).toBeLessThanOrEqual(1e-3);
    const [b64] = (await engine.embeddings.create({ input: input.text, encoding_format: 'base64' })).data;
    const bytes = Buffer.from(b64!.embedding as string, 'base64');
    const decoded = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
    const [float] = (await engine.embeddings.create({ input: input.text })).data;
    expect(Array.from(decoded)).toEqual((float!.embedding as number[]).map(Math.fround));
    const [fromTokens] = (await engine.embeddings.create({ input: [input.tokens] })).data;
    expect(fromTokens!.embedding).toEqual(float!.embedding);
  });

  it('bad input is invalid-request naming the field; truncate: true cuts long inputs to the context', async () => {
    const long = ref().inputs[2]!; // 34 tokens
    await expectInvalid(engine.embeddings.create({ input: [] }), /'input'/);
    await expectInvalid(engine.embeddings.create({ input: '' }), /'input'/);
    await expectInvalid(engine.embeddings.create({ input: ['a', ''] }), /'input\[1\]'/);
    await expectInvalid(engine.embeddings.create({ input: [[1, 99999]] }), /'input\[0\]\[1\]'/);
    await expectInvalid(engine.embeddings.create({ input: 'a', dimensions: 129 }), /'dimensions'.*1…128/);
    await expectInvalid(engine.embeddings.create({ input: 'a', dimensions: 0 }), /'dimensions'/);
    await expectInvalid(
      engine.embeddings.create({ input: 'a', encoding_format: 'f16' as 'float' }),
      /'encoding_format'/,
    );
    await expectInvalid(
      engine.embeddings.create({ input: 'a', pooling: 'rank' } as unknown as { input: string }),
      /'pooling'/,
    );
    await expectInvalid(
      engine.embeddings.create({ input: 'a', pool: 'mean' } as unknown as { input: string }),
      /'pool' is not supported/,
    );
    const tooLong = [...long.tokens, ...long.tokens];
    await expectInvalid(engine.embeddings.create({ input: [tooLong] }), /68 tokens, longer than the context \(40\)/);
    const cut = await engine.embeddings.create({ input: [tooLong], truncate: true });
    const first = await engine.embeddings.create({ input: [tooLong.slice(0, 40)] });
    expect(cut.data[0]!.embedding).toEqual(first.data[0]!.embedding);
    expect(cut.usage.prompt_tokens).toBe(40);
  });

  it('leaves chat generation as it was (the embedding slot is leased from the prompt cache)', async () => {
    const ask = () => engine.completions.create({ prompt: 'Once upon a time', max_tokens: 6, temperature: 0 });
    const before = (await ask()).choices[0]!.text;
    await engine.embeddings.create({ input: ['Once upon a time', 'Lily'] });
    expect((await ask()).choices[0]!.text).toBe(before);
  });
});

describe('embeddings.create on a model without pooling', () => {
  it('is invalid-request', async () => {
    const engine = await createEngine({
      model: sharedPath('models', 'stories260K.gguf'),
      backend: 'cpu',
      warmup: false,
    });
    try {
      await expectInvalid(engine.embeddings.create({ input: 'hello' }), /pooling type 'none'/);
      // A request may pool a model whose file states no pooling (llama.cpp's --pooling), as Qwen3-Embedding needs.
      const r = await engine.embeddings.create({ input: 'hello', pooling: 'last' });
      expect(Math.hypot(...(r.data[0]!.embedding as number[]))).toBeCloseTo(1, 5);
    } finally {
      await engine.unload();
    }
  });
});

describe('embeddings.create through the worker', () => {
  const channels = useChannels();
  it('answers like the in-thread engine, errors keep their code', async () => {
    const api = createWorkerApi((o) => createEngine({ ...o, backend: 'cpu', warmup: false }));
    const engine = await connectWorkerEngine(channels.expose(api), { model: MODEL, contextLength: 40 });
    try {
      const local = await createEngine({ model: MODEL, backend: 'cpu', contextLength: 40, warmup: false });
      const want = await local.embeddings.create({ input: ['Hi', 'Lily'], dimensions: 16 });
      await local.unload();
      expect(await engine.embeddings.create({ input: ['Hi', 'Lily'], dimensions: 16 })).toEqual(want);
      await expectInvalid(engine.embeddings.create({ input: [] }), /'input'/);
    } finally {
      await engine.unload();
    }
  });
});
