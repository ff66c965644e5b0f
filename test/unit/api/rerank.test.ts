/**
 * `engine.rerank` on a recorded Qwen3-Reranker-style fixture (rank pooling, cls.output [n_embd, 2], softmax; CPU
 * backend): a (query, document) pair scores what llama.cpp's rank pooling gives the same tokens, results are sorted
 * and cut to top_n, bad requests and non-rerankers are invalid-request, and the worker path answers the same.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/api/create-engine.js';
import type { Engine } from '../../../src/api/engine.js';
import type { RerankRequest } from '../../../src/api/embedding-types.js';
import { isLlmError } from '../../../src/errors.js';
import { connectWorkerEngine } from '../../../src/worker/client.js';
import { createWorkerApi } from '../../../src/worker/worker-api.js';
import { RECORDED_FIXTURE_DIR } from '../../helpers/shared-path.js';
import { useChannels } from '../worker/worker-harness.js';

const ID = 'qwen3-f32-embd-rank-s7';
const MODEL = join(RECORDED_FIXTURE_DIR, `${ID}.gguf`);

interface Ref {
  readonly inputs: { readonly text: string; readonly tokens: number[]; readonly embedding: number[] }[];
}

async function invalid(p: Promise<unknown>, pattern: RegExp): Promise<void> {
  const e = await p.then(
    () => null,
    (x: unknown) => x,
  );
  expect(isLlmError(e, 'invalid-request'), String(e)).toBe(true);
  expect((e as Error).message).toMatch(pattern);
}

const request: RerankRequest = {
  query: 'Once upon a time,',
  documents: [' there was a robot.', 'Lily', 'Hi'],
  return_documents: true,
};

describe('rerank (qwen3 rank pooling)', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({ model: MODEL, backend: 'cpu', contextLength: 64, warmup: false });
  });
  afterAll(() => engine.unload());

  it("scores a pair as llama.cpp's rank pooling scores its tokens; sorted, top_n, documents on request", async () => {
    const ref = JSON.parse(readFileSync(join(RECORDED_FIXTURE_DIR, `${ID}.embeddings.json`), 'utf8')) as Ref;
    const whole = ref.inputs[1]!; // 'Once upon a time, there was a robot.' = query tokens + document 0 tokens
    expect([...(await engine.tokenize(request.query)), ...(await engine.tokenize(request.documents[0]!))]).toEqual(
      whole.tokens,
    );
    const r = await engine.rerank(request);
    expect(r.object).toBe('list');
    const scores = r.results.map((x) => x.relevance_score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(r.results.map((x) => x.index).sort()).toEqual([0, 1, 2]);
    const doc0 = r.results.find((x) => x.index === 0)!;
    expect(doc0.document).toEqual({ text: request.documents[0] });
    expect(Math.abs(doc0.relevance_score - whole.embedding[0]!)).toBeLessThanOrEqual(1e-5);
    const top = await engine.rerank({ query: request.query, documents: request.documents, top_n: 1 });
    expect(top.results).toEqual([{ index: r.results[0]!.index, relevance_score: r.results[0]!.relevance_score }]);
  });

  it('bad requests and non-rerankers are invalid-request', async () => {
    await invalid(engine.rerank({ query: '', documents: ['a'] }), /'query'/);
    await invalid(engine.rerank({ query: 'q', documents: [] }), /'documents'/);
    await invalid(engine.rerank({ query: 'q', documents: ['a', ''] }), /'documents\[1\]'/);
    await invalid(engine.rerank({ query: 'q', documents: ['a'], top_n: 0 }), /'top_n'/);
    await invalid(engine.embeddings.create({ input: 'a' }), /pooling type 'rank'/);
    const embedder = await createEngine({
      model: join(RECORDED_FIXTURE_DIR, 'qwen3-f32-embd-last-s5.gguf'),
      backend: 'cpu',
      warmup: false,
    });
    try {
      await invalid(embedder.rerank({ query: 'q', documents: ['a'] }), /not a reranker/);
    } finally {
      await embedder.unload();
    }
  });
});

describe('rerank through the worker', () => {
  const channels = useChannels();
  it('answers like the in-thread engine', async () => {
    const api = createWorkerApi((o) => createEngine({ ...o, backend: 'cpu', warmup: false }));
    const remote = await connectWorkerEngine(channels.expose(api), { model: MODEL, contextLength: 64 });
    const local = await createEngine({ model: MODEL, backend: 'cpu', contextLength: 64, warmup: false });
    try {
      expect(await remote.rerank(request)).toEqual(await local.rerank(request));
    } finally {
      await local.unload();
      await remote.unload();
    }
  });
});
