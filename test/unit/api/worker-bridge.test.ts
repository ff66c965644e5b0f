/**
 * The worker path without a browser: the worker API is exposed on one end of a MessageChannel and the client
 * connects on the other, exactly as through a Worker. Checks results, streams, LlmError code/details, progress
 * callbacks, AbortSignal crossing, stream cancellation and unload.
 */
import { describe, expect, it } from 'vitest';
import type { Engine, EngineOptions, LoadProgress } from '../../../src/api/engine.js';
import { isLlmError, LlmError } from '../../../src/errors.js';
import { connectWorkerEngine } from '../../../src/worker/client.js';
import { deserializeError, serializeError } from '../../../src/worker/errors.js';
import { createWorkerApi } from '../../../src/worker/worker-api.js';
import { createFakeTransformer, spellScript } from '../engine/fake-model.js';
import { createFakeEngine, useChannels } from '../worker/worker-harness.js';

const channels = useChannels();

async function connect(script = spellScript('Hi from the worker.'), delayMs = 0) {
  const transformer = createFakeTransformer({ script, delayMs });
  const factory = async (o: EngineOptions): Promise<Engine> => {
    o.onProgress?.({ phase: 'upload', loadedBytes: 5, totalBytes: 10 });
    o.onProgress?.({ phase: 'ready', loadedBytes: 10, totalBytes: 10 });
    return createFakeEngine(o.model, transformer, 256, 2);
  };
  const progress: LoadProgress[] = [];
  const engine = await connectWorkerEngine(channels.expose(createWorkerApi(factory)), {
    model: 'model.gguf',
    onProgress: (p) => progress.push(p),
  });
  return { engine, transformer, progress };
}

describe('error serialisation', () => {
  it('keeps LlmError code, message and details; plain errors stay Errors', () => {
    const e = deserializeError(
      serializeError(new LlmError('context-overflow', 'too long', { details: { promptTokens: 9, contextLength: 8 } })),
    );
    expect(e).toBeInstanceOf(LlmError);
    expect(e).toMatchObject({
      code: 'context-overflow',
      message: 'too long',
      details: { promptTokens: 9, contextLength: 8 },
    });
    const p = deserializeError(serializeError(new TypeError('x')));
    expect(p).toBeInstanceOf(Error);
    expect((p as Error).name).toBe('TypeError');
    expect(deserializeError(serializeError('str'))).toBe('str');
  });
});

describe('worker engine over a MessageChannel', () => {
  it('loads with progress and answers like the local engine', async () => {
    const { engine, progress } = await connect();
    expect(engine.info.model.identity).toBe('fake:model.gguf');
    expect(progress.map((p) => p.phase)).toEqual(['upload', 'ready']);
    const r = await engine.chat.completions.create({ messages: [{ role: 'user', content: 'hey' }], temperature: 0 });
    expect(r.choices[0].message.content).toBe('Hi from the worker.');
    expect(r.usage.completion_tokens).toBe(19);
    expect(await engine.tokenize('ab')).toEqual([256, 97, 98]);
    expect(await engine.detokenize([97, 98])).toBe('ab');
    expect((await engine.stats()).requests).toBe(1);
    await engine.unload();
  });

  it('streams chunks as an async iterable, usage last', async () => {
    const { engine } = await connect();
    const stream = await engine.chat.completions.create({
      messages: [{ role: 'user', content: 'hey' }],
      temperature: 0,
      stream: true,
    });
    let text = '';
    let last = null;
    for await (const c of stream) {
      text += c.choices[0].delta.content ?? '';
      last = c;
    }
    expect(text).toBe('Hi from the worker.');
    expect(last?.usage?.completion_tokens).toBe(19);
    const raw = await engine.completions.create({ prompt: 'x', max_tokens: 3, stream: true });
    let n = 0;
    for await (const _ of raw) n++;
    expect(n).toBe(4); // 3 tokens + the final chunk
    await engine.unload();
  });

  it('n choices cross: whole and streamed with their index, usage summing the choices', async () => {
    const { engine } = await connect();
    const req = { messages: [{ role: 'user' as const, content: 'hey' }], temperature: 0, n: 2 };
    const r = await engine.chat.completions.create(req);
    expect(r.choices.map((c) => [c.index, c.message.content])).toEqual([
      [0, 'Hi from the worker.'],
      [1, 'Hi from the worker.'],
    ]);
    expect(r.usage.completion_tokens).toBe(38);
    const text = ['', ''];
    let usage = null;
    for await (const c of await engine.chat.completions.create({ ...req, stream: true })) {
      for (const ch of c.choices) text[ch.index] += ch.delta.content ?? '';
      usage = c.usage ?? usage;
    }
    expect(text).toEqual(['Hi from the worker.', 'Hi from the worker.']);
    expect(usage?.completion_tokens).toBe(38);
    await engine.unload();
  });
  it('LlmError crosses with its code and details', async () => {
    const { engine } = await connect();
    const e = await engine.chat.completions
      .create({ messages: [{ role: 'user', content: 'x' }], temperature: -3 })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(LlmError);
    expect(e).toMatchObject({ code: 'invalid-request', details: { field: 'temperature' } });
    await engine.unload();
  });

  it('an AbortSignal crosses: aborting mid-stream ends it with aborted, and the engine stays usable', async () => {
    const { engine } = await connect(() => 97, 2);
    const ac = new AbortController();
    const stream = await engine.chat.completions.create({
      messages: [{ role: 'user', content: 'go' }],
      temperature: 0,
      stream: true,
      max_tokens: 200,
      signal: ac.signal,
    });
    let n = 0;
    const err = await (async () => {
      try {
        for await (const _ of stream) if (++n === 3) ac.abort();
      } catch (x) {
        return x;
      }
      return null;
    })();
    expect(isLlmError(err, 'aborted')).toBe(true);
    const r = await engine.chat.completions.create({
      messages: [{ role: 'user', content: 'again' }],
      temperature: 0,
      max_tokens: 2,
    });
    expect(r.choices[0].message.content).toBe('aa');
    // A signal aborted before the call rejects at once.
    const pre = new AbortController();
    pre.abort();
    const e2 = await engine.chat.completions
      .create({ messages: [{ role: 'user', content: 'x' }], signal: pre.signal })
      .catch((x: unknown) => x);
    expect(isLlmError(e2, 'aborted')).toBe(true);
    await engine.unload();
  });

  it('breaking out of a remote stream cancels the request in the worker', async () => {
    const { engine, transformer } = await connect(() => 98, 1);
    const stream = await engine.chat.completions.create({
      messages: [{ role: 'user', content: 'go' }],
      temperature: 0,
      stream: true,
      max_tokens: 500,
    });
    let n = 0;
    for await (const _ of stream) if (++n === 2) break;
    const r = await engine.chat.completions.create({
      messages: [{ role: 'user', content: 'next' }],
      temperature: 0,
      max_tokens: 1,
    });
    expect(r.choices[0].finish_reason).toBe('length');
    expect(transformer.counters.evaluatedTokens).toBeLessThan(400);
    await engine.unload();
    expect(transformer.counters.destroyed).toBe(true);
  });
});
