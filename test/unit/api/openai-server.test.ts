/**
 * `webgguf serve`'s server driven by the real `openai` client on 127.0.0.1 (stories260K, CPU backend): chat and
 * text completions whole and streamed, JSON schema output, logprobs, forced tool calls, models, a wrong key (401),
 * malformed JSON (400), an oversized body (413), a client that aborts its stream (the engine is free again at
 * once), concurrent requests (queued, all answered), and the CLI command's flags.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/api/create-engine.js';
import type { Engine } from '../../../src/api/engine.js';
import { createOpenAiServer } from '../../../src/server/openai-server.js';
import { runCli } from '../../../src/cli/main.js';
import { sharedPath } from '../../helpers/shared-path.js';

const KEY = 'sk-test-123';

describe('OpenAI-compatible server with the openai client', () => {
  let engine: Engine;
  let server: Server;
  let base: string;
  let client: OpenAI;
  beforeAll(async () => {
    engine = await createEngine({
      model: sharedPath('models', 'stories260K.gguf'),
      backend: 'cpu',
      contextLength: 1024,
    });
    server = await createOpenAiServer(engine, { apiKey: KEY, cors: '*', maxBodyBytes: 64 * 1024, modelId: 'stories' });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    client = new OpenAI({ baseURL: `${base}/v1`, apiKey: KEY, maxRetries: 0 });
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    await engine.unload();
  });

  it('chat and completions, whole and streamed', async () => {
    const r = await client.chat.completions.create({
      model: 'stories',
      messages: [{ role: 'user', content: 'Once upon a time' }],
      temperature: 0,
      max_tokens: 12,
    });
    expect(r.object).toBe('chat.completion');
    expect(r.choices[0].message.content!.length).toBeGreaterThan(0);
    const s = await client.chat.completions.create({
      model: 'stories',
      messages: [{ role: 'user', content: 'Once upon a time' }],
      temperature: 0,
      max_tokens: 12,
      stream: true,
    });
    let text = '';
    let finish: string | null = null;
    for await (const c of s) {
      text += c.choices[0]?.delta.content ?? '';
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toBe(r.choices[0].message.content);
    expect(finish).toBe(r.choices[0].finish_reason);
    const t = await client.completions.create({
      model: 'stories',
      prompt: 'Lily',
      temperature: 0,
      max_tokens: 8,
      logprobs: 2,
    });
    expect(t.choices[0].logprobs!.tokens!.length).toBe(t.usage!.completion_tokens);
    const ts = await client.completions.create({
      model: 'stories',
      prompt: 'Lily',
      temperature: 0,
      max_tokens: 8,
      stream: true,
    });
    let t2 = '';
    for await (const c of ts) t2 += c.choices[0]?.text ?? '';
    expect(t2).toBe(t.choices[0].text);
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['stories']);
  });

  it('n choices: seeded, distinct, streamed by index (3 choices over 2 slots)', async () => {
    const req = {
      model: 'stories',
      messages: [{ role: 'user' as const, content: 'Once upon a time' }],
      temperature: 1,
      seed: 7,
      max_tokens: 10,
      n: 3,
    };
    const r = await client.chat.completions.create(req);
    const texts = r.choices.map((c) => c.message.content);
    expect(r.choices.map((c) => c.index)).toEqual([0, 1, 2]);
    expect(new Set(texts).size).toBeGreaterThan(1);
    const s = await client.chat.completions.create({ ...req, stream: true });
    const streamed = ['', '', ''];
    let completion = 0;
    for await (const c of s) {
      for (const ch of c.choices) streamed[ch.index] += ch.delta.content ?? '';
      completion = c.usage?.completion_tokens ?? completion;
    }
    expect(streamed).toEqual(texts);
    expect(completion).toBe(r.usage!.completion_tokens);
    const one = await client.chat.completions.create({ ...req, n: 1, seed: 8 });
    expect(one.choices[0].message.content).toBe(texts[1]);
  });

  it('json_schema, logprobs and forced tool calls', async () => {
    const schema = {
      type: 'object',
      properties: { ok: { type: 'boolean' }, n: { type: 'integer', minimum: 0, maximum: 9 } },
      required: ['ok', 'n'],
      additionalProperties: false,
    };
    const r = await client.chat.completions.create({
      model: 'stories',
      messages: [{ role: 'user', content: 'Tom' }],
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema, strict: true } },
      temperature: 0,
      max_tokens: 60,
      logprobs: true,
      top_logprobs: 3,
    });
    const v = JSON.parse(r.choices[0].message.content!) as { ok: boolean; n: number };
    expect(typeof v.ok).toBe('boolean');
    expect(r.choices[0].logprobs!.content![0].top_logprobs).toHaveLength(3);
    const tool = {
      type: 'function' as const,
      function: {
        name: 'pick',
        parameters: {
          type: 'object',
          properties: { color: { enum: ['red', 'blue'] } },
          required: ['color'],
          additionalProperties: false,
        },
      },
    };
    const c = await client.chat.completions.create({
      model: 'stories',
      messages: [{ role: 'user', content: 'Tom' }],
      tools: [tool],
      tool_choice: 'required',
      temperature: 0,
      max_tokens: 80,
    });
    expect(c.choices[0].finish_reason).toBe('tool_calls');
    const call = c.choices[0].message.tool_calls![0] as { function: { name: string; arguments: string } };
    expect(call.function.name).toBe('pick');
    expect(['red', 'blue']).toContain((JSON.parse(call.function.arguments) as { color: string }).color);
    // Streamed: the call's arguments arrive in fragments as they are written and concatenate to the same call.
    const s = await client.chat.completions.create({
      model: 'stories',
      messages: [{ role: 'user', content: 'Tom' }],
      tools: [tool],
      tool_choice: 'required',
      temperature: 0,
      max_tokens: 80,
      stream: true,
    });
    let name = '';
    let args = '';
    let fragments = 0;
    let finish: string | null = null;
    for await (const ch of s) {
      for (const f of ch.choices[0]?.delta.tool_calls ?? []) {
        name += f.function?.name ?? '';
        args += f.function?.arguments ?? '';
        fragments++;
      }
      finish = ch.choices[0]?.finish_reason ?? finish;
    }
    expect(name).toBe('pick');
    expect(args).toBe(call.function.arguments);
    expect(fragments).toBeGreaterThan(2);
    expect(finish).toBe('tool_calls');
  });

  it('errors: wrong key 401, malformed JSON 400, oversized body 413, bad field 400 — OpenAI error objects', async () => {
    const bad = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'wrong', maxRetries: 0 });
    const e = await bad.models.list().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(OpenAI.AuthenticationError);
    const post = (b: string) =>
      fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
        body: b,
      });
    const m = await post('{"messages": [');
    expect(m.status).toBe(400);
    expect(((await m.json()) as { error: { code: string; message: string } }).error.code).toBe('invalid_json');
    const big = await post(JSON.stringify({ messages: [{ role: 'user', content: 'x'.repeat(70 * 1024) }] }));
    expect(big.status).toBe(413);
    const f = await client.chat.completions
      .create({ model: 'x', messages: [{ role: 'user', content: 'x' }], top_logprobs: 50, logprobs: true })
      .catch((x: unknown) => x);
    expect(f).toBeInstanceOf(OpenAI.BadRequestError);
    expect((f as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('top_logprobs');
    expect((await fetch(`${base}/health`)).status).toBe(200);
  });

  it('a client that aborts its stream aborts the generation; concurrent requests queue and all finish', async () => {
    const ac = new AbortController();
    const s = await client.chat.completions.create(
      {
        model: 'x',
        messages: [{ role: 'user', content: 'Once' }],
        max_tokens: 900,
        temperature: 1,
        seed: 1,
        logit_bias: { '2': -100 },
        stream: true,
      },
      { signal: ac.signal },
    );
    let n = 0;
    try {
      for await (const c of s) {
        void c;
        if (++n === 3) ac.abort();
      }
    } catch {
      // the client reports the abort (or ends the stream quietly)
    }
    expect(n).toBeGreaterThanOrEqual(3);
    const before = Date.now();
    const rs = await Promise.all(
      [1, 2, 3].map((seed) =>
        client.completions.create({ model: 'x', prompt: 'Once', max_tokens: 6, seed, temperature: 1 }),
      ),
    );
    expect(rs.every((r) => r.usage!.completion_tokens > 0)).toBe(true);
    expect(Date.now() - before).toBeLessThan(60_000);
    const stats = await engine.stats();
    // The aborted stream (its end token banned: it would run all 900 tokens) stopped long before.
    expect(stats.decodeTokens).toBeLessThan(600);
  });
});

describe('webgguf serve flags', () => {
  it('refuses a missing model and a bad port', async () => {
    const io = { out: () => {}, err: () => {}, signal: new AbortController().signal };
    expect(await runCli(['serve'], io)).not.toBe(0);
    expect(await runCli(['serve', 'm.gguf', '--port', 'x'], io)).not.toBe(0);
    expect(await runCli(['serve', 'm.gguf', '--port', '70000'], io)).not.toBe(0);
  });
});
