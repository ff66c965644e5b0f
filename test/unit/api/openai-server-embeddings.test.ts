/**
 * `POST /v1/embeddings` of `webgguf serve`'s server, driven by the real `openai` client (recorded qwen3 embedding
 * fixture, CPU backend): float and base64 answers decode to the same vectors, `dimensions` is honoured, and a bad
 * request is a 400 OpenAI error object.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/api/create-engine.js';
import type { Engine } from '../../../src/api/engine.js';
import { createOpenAiServer } from '../../../src/server/openai-server.js';
import { RECORDED_FIXTURE_DIR } from '../../helpers/shared-path.js';

describe('/v1/embeddings', () => {
  let engine: Engine;
  let server: Server;
  let client: OpenAI;
  beforeAll(async () => {
    const model = join(RECORDED_FIXTURE_DIR, 'qwen3-f32-embd-mean-s6.gguf');
    engine = await createEngine({ model, backend: 'cpu', contextLength: 64, warmup: false });
    server = await createOpenAiServer(engine, { modelId: 'embedder' });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    client = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'x', maxRetries: 0 });
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    await engine.unload();
  });

  it('answers the openai client (float and base64), honours dimensions; bad input is 400', async () => {
    const input = ['Once upon a time', 'Lily'];
    const float = await client.embeddings.create({ model: 'embedder', input, encoding_format: 'float' });
    expect(float.object).toBe('list');
    expect(float.model).toBe('embedder');
    expect(float.data.map((d) => d.embedding.length)).toEqual([128, 128]);
    const local = await engine.embeddings.create({ input });
    expect(float.data.map((d) => d.embedding)).toEqual(local.data.map((d) => d.embedding));
    // The openai client asks for base64 by default and decodes it to floats itself.
    const b64 = await client.embeddings.create({ model: 'embedder', input, dimensions: 16 });
    const short = await engine.embeddings.create({ input, dimensions: 16 });
    expect(b64.data.map((d) => d.embedding)).toEqual(short.data.map((d) => (d.embedding as number[]).map(Math.fround)));
    const bad = await client.embeddings.create({ model: 'embedder', input: [] }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(bad).toBeInstanceOf(OpenAI.APIError);
    expect((bad as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
  });
});

describe('/v1/rerank', () => {
  it('answers a reranker with sorted results (llama-server / Jina / Cohere shape)', async () => {
    const model = join(RECORDED_FIXTURE_DIR, 'qwen3-f32-embd-rank-s7.gguf');
    const engine = await createEngine({ model, backend: 'cpu', contextLength: 64, warmup: false });
    const server = await createOpenAiServer(engine, { modelId: 'reranker' });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/rerank`;
      const body = { query: 'Once upon a time,', documents: ['Hi', 'Lily', ' there was a robot.'], top_n: 2 };
      const res = await fetch(url, { method: 'POST', body: JSON.stringify(body) });
      expect(res.status).toBe(200);
      const got = (await res.json()) as { model: string; results: unknown[] };
      const want = await engine.rerank(body);
      expect(got).toEqual({ ...want, model: 'reranker' });
      expect(got.results).toHaveLength(2);
      const bad = await fetch(url, { method: 'POST', body: JSON.stringify({ query: 'q', documents: [] }) });
      expect(bad.status).toBe(400);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
      await engine.unload();
    }
  });
});
