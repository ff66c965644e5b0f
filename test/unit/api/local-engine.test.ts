/**
 * The in-thread Engine over a fake transformer and tokenizer: OpenAI shapes, streaming, prompt-cache reuse across
 * turns and conversations, seeds, stops, validation, overflow and history truncation, the FIFO queue, aborts
 * (100 in a row leave the engine unchanged) and unload during a request.
 */
import { describe, expect, it } from 'vitest';
import { createChatMlFormatter } from '../../../src/api/chat-formatter.js';
import type { Engine } from '../../../src/api/engine.js';
import { createEngineFromParts, type LocalEngine, type EngineParts } from '../../../src/api/local-engine.js';
import type { ChatCompletionChunk, ChatMessage } from '../../../src/api/types.js';
import { isLlmError } from '../../../src/errors.js';
import { llmError } from '../../helpers/llm-error.js';
import {
  createFakeTokenizer,
  createFakeTransformer,
  spellScript,
  type FakeTransformerOptions,
} from '../engine/fake-model.js';

async function makeEngine(o: FakeTransformerOptions & Partial<EngineParts> = {}) {
  const transformer = createFakeTransformer(o);
  const tokenizer = createFakeTokenizer();
  const engine = (await createEngineFromParts({
    transformer,
    tokenizer,
    chat: createChatMlFormatter(tokenizer),
    modelIdentity: 'fake:1',
    backend: { name: 'fake', description: 'fake', reason: 'requested' },
    contextLength: o.contextLength ?? 256,
    slots: o.nSlots ?? 2,
    maxQueue: o.maxQueue,
    warmup: o.warmup,
    cacheTokenBudget: o.cacheTokenBudget,
  })) as LocalEngine;
  return { engine, transformer, tokenizer };
}

const sys: ChatMessage = { role: 'system', content: 'You are terse.' };
const user = (content: string): ChatMessage => ({ role: 'user', content });

async function collect(
  stream: AsyncIterable<ChatCompletionChunk>,
): Promise<{ text: string; chunks: ChatCompletionChunk[] }> {
  const chunks: ChatCompletionChunk[] = [];
  for await (const c of stream) chunks.push(c);
  return { text: chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), chunks };
}

const errorOf = llmError;

describe('LocalEngine', () => {
  it('warms up at creation, then forgets the warmup (warmup: false skips it)', async () => {
    const { engine, transformer } = await makeEngine();
    expect(transformer.counters.evalCalls).toBe(1);
    expect(engine.context.kv.totalTokens()).toBe(0);
    const s = await engine.stats();
    expect(s.prefillTokens).toBe(0);
    expect(s.promptCache.lookups).toBe(0);
    const cold = await makeEngine({ warmup: false });
    expect(cold.transformer.counters.evalCalls).toBe(0);
  });

  it('answers a chat completion shaped like OpenAI', async () => {
    const { engine, tokenizer } = await makeEngine({ script: spellScript('Hello!') });
    const messages = [sys, user('hi')];
    const r = await engine.chat.completions.create({ messages, temperature: 0 });
    expect(r.object).toBe('chat.completion');
    expect(r.choices[0]).toMatchObject({
      index: 0,
      message: { role: 'assistant', content: 'Hello!' },
      finish_reason: 'stop',
      logprobs: null,
    });
    const promptTokens = createChatMlFormatter(tokenizer).build(messages).tokens.length;
    expect(r.usage).toEqual({
      prompt_tokens: promptTokens,
      completion_tokens: 6,
      total_tokens: promptTokens + 6,
      prompt_tokens_details: { cached_tokens: 0 },
    });
  });

  it('streams the same text, role first, usage and finish_reason last', async () => {
    const { engine } = await makeEngine({ script: spellScript('Streaming works.') });
    const stream = await engine.chat.completions.create({ messages: [user('go')], temperature: 0, stream: true });
    const { text, chunks } = await collect(stream);
    expect(text).toBe('Streaming works.');
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    const last = chunks[chunks.length - 1];
    expect(last.choices[0].finish_reason).toBe('stop');
    expect(last.usage?.completion_tokens).toBe(16);
    expect(chunks.slice(0, -1).every((c) => c.usage === null && c.choices[0].finish_reason === null)).toBe(true);
  });

  it('the second turn prefills only its new tokens', async () => {
    const { engine, transformer, tokenizer } = await makeEngine({ script: spellScript('Sure.') });
    const fmt = createChatMlFormatter(tokenizer);
    const turn1: ChatMessage[] = [sys, user('Count to three.')];
    const r1 = await engine.chat.completions.create({ messages: turn1, temperature: 0 });
    const p1 = fmt.build(turn1).tokens;
    const turn2: ChatMessage[] = [
      ...turn1,
      { role: 'assistant', content: r1.choices[0].message.content },
      user('Again.'),
    ];
    const p2 = fmt.build(turn2).tokens;
    const before = transformer.counters.evaluatedTokens;
    const r2 = await engine.chat.completions.create({ messages: turn2, temperature: 0, max_tokens: 1 });
    const cached = p1.length + 'Sure.'.length;
    expect(r2.usage.prompt_tokens_details.cached_tokens).toBe(cached);
    // Evaluated now: the new prompt tokens only (the one sampled token is not evaluated at max_tokens 1).
    expect(transformer.counters.evaluatedTokens - before).toBe(p2.length - cached);
    expect((await engine.stats()).promptCache.reusedTokens).toBe(cached);
  });

  it('two conversations sharing a system prompt share its KV', async () => {
    const { engine, transformer, tokenizer } = await makeEngine({ script: spellScript('ok') });
    const fmt = createChatMlFormatter(tokenizer);
    const a: ChatMessage[] = [sys, user('first conversation')];
    const b: ChatMessage[] = [sys, user('second one')];
    await engine.chat.completions.create({ messages: a, temperature: 0 });
    const rb = await engine.chat.completions.create({ messages: b, temperature: 0 });
    const ta = fmt.build(a).tokens;
    const tb = fmt.build(b).tokens;
    let common = 0;
    while (ta[common] === tb[common]) common++;
    expect(rb.usage.prompt_tokens_details.cached_tokens).toBe(common);
    expect(transformer.counters.copies).toBe(1);
    // Conversation A kept its KV: its next turn reuses all of it.
    const a2 = [...a, { role: 'assistant' as const, content: 'ok' }, user('more')];
    const ra2 = await engine.chat.completions.create({ messages: a2, temperature: 0 });
    expect(ra2.usage.prompt_tokens_details.cached_tokens).toBe(ta.length + 2);
  });

  it('cached and uncached runs give identical tokens (KV reuse is exact)', async () => {
    const run = async (warm: boolean) => {
      const { engine } = await makeEngine();
      const messages = [sys, user('tell me something')];
      if (warm) await engine.chat.completions.create({ messages: [sys, user('tell me')], max_tokens: 3, seed: 1 });
      return (await engine.chat.completions.create({ messages, max_tokens: 12, seed: 5, temperature: 1 })).choices[0]
        .message.content;
    };
    expect(await run(true)).toBe(await run(false));
  });

  it('a raw completion never reuses chat KV (different template key)', async () => {
    const { engine, tokenizer } = await makeEngine();
    const messages = [sys, user('x')];
    await engine.chat.completions.create({ messages, max_tokens: 2 });
    // The very same token ids, but under the raw-completion key: no reuse.
    const prompt = createChatMlFormatter(tokenizer).build(messages).tokens;
    const r = await engine.completions.create({ prompt, max_tokens: 2 });
    expect(r.object).toBe('text_completion');
    expect(r.usage.prompt_tokens_details.cached_tokens).toBe(0);
  });

  it('the same seed gives the same text; another seed another', async () => {
    const { engine } = await makeEngine();
    const req = { messages: [user('random please')], temperature: 1, top_k: 0, top_p: 1, min_p: 0, max_tokens: 20 };
    const a = await engine.chat.completions.create({ ...req, seed: 123 });
    const b = await engine.chat.completions.create({ ...req, seed: 123 });
    const c = await engine.chat.completions.create({ ...req, seed: 124 });
    expect(b.choices[0].message.content).toBe(a.choices[0].message.content);
    expect(c.choices[0].message.content).not.toBe(a.choices[0].message.content);
  });

  it('stops at a stop string (never emitted) and at max_tokens', async () => {
    const { engine } = await makeEngine({ script: spellScript('abc STOP def') });
    const r = await engine.chat.completions.create({ messages: [user('q')], temperature: 0, stop: ['STOP'] });
    expect(r.choices[0]).toMatchObject({ message: { content: 'abc ' }, finish_reason: 'stop' });
    const s = await engine.chat.completions.create({ messages: [user('q')], temperature: 0, stop: 'ST', stream: true });
    expect((await collect(s)).text).toBe('abc ');
    const m = await engine.chat.completions.create({ messages: [user('q')], temperature: 0, max_tokens: 3 });
    expect(m.choices[0]).toMatchObject({ message: { content: 'abc' }, finish_reason: 'length' });
    expect(m.usage.completion_tokens).toBe(3);
  });

  it('rejects invalid parameters naming the field', async () => {
    const { engine } = await makeEngine();
    const m = [user('x')];
    const bad: [Record<string, unknown>, string][] = [
      [{ messages: m, temperature: -1 }, 'temperature'],
      [{ messages: m, top_p: 2 }, 'top_p'],
      [{ messages: m, top_k: 1.5 }, 'top_k'],
      [{ messages: m, max_tokens: 0 }, 'max_tokens'],
      [{ messages: m, stop: [''] }, 'stop'],
      [{ messages: m, logit_bias: { '99999': 1 } }, 'logit_bias.99999'],
      [{ messages: m, logit_bias: { '5': 500 } }, 'logit_bias.5'],
      [{ messages: m, n: 9 }, 'n'],
      [{ messages: m, seed: 1.5 }, 'seed'],
      [{ messages: [] }, 'messages'],
      [{ messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role'],
      [{ messages: [{ role: 'user', content: 5 }] }, 'messages[0].content'],
      [{ messages: m, truncate: 'all' }, 'truncate'],
    ];
    for (const [req, field] of bad) {
      const e = await errorOf(engine.chat.completions.create(req as never));
      expect(e.code, field).toBe('invalid-request');
      expect(e.details?.field).toBe(field);
      expect(e.message).toContain(`'${field}'`);
    }
    const e = await errorOf(engine.completions.create({ prompt: '' }));
    expect(e.details?.field).toBe('prompt');
  });

  it('context overflow fails, or trims whole turns with truncate: history', async () => {
    const { engine } = await makeEngine({ contextLength: 128, script: spellScript('k') });
    const long = 'x'.repeat(200);
    const e = await errorOf(engine.chat.completions.create({ messages: [user(long)] }));
    expect(e.code).toBe('context-overflow');
    expect(e.details).toMatchObject({ contextLength: 128 });
    const history: ChatMessage[] = [sys];
    for (let i = 0; i < 6; i++)
      history.push(user(`question ${i} ${'y'.repeat(20)}`), { role: 'assistant', content: `answer ${i}` });
    history.push(user('last question'));
    await expect(engine.chat.completions.create({ messages: history, max_tokens: 4 })).rejects.toSatisfy((x) =>
      isLlmError(x, 'context-overflow'),
    );
    const r = await engine.chat.completions.create({
      messages: history,
      max_tokens: 4,
      truncate: 'history',
      temperature: 0,
    });
    expect(r.usage.prompt_tokens + 4).toBeLessThanOrEqual(128);
    expect(r.choices[0].message.content).toBe('k');
    // Even the last message alone does not fit: still an overflow, naming the reason.
    const e2 = await errorOf(engine.chat.completions.create({ messages: [sys, user(long)], truncate: 'history' }));
    expect(e2.code).toBe('context-overflow');
  });

  it('queues concurrent requests FIFO and refuses beyond maxQueue', async () => {
    const { engine } = await makeEngine({ maxQueue: 1, delayMs: 2 });
    const order: number[] = [];
    const req = (i: number) =>
      engine.chat.completions.create({ messages: [user(`r${i}`)], max_tokens: 3 }).then(() => order.push(i));
    const first = req(1);
    const second = req(2);
    const e = await errorOf(engine.chat.completions.create({ messages: [user('r3')], max_tokens: 3 }));
    expect(e.code).toBe('invalid-request');
    expect(e.message).toMatch(/maxQueue/);
    await Promise.all([first, second]);
    expect(order).toEqual([1, 2]);
  });

  it('abort mid-stream ends the stream with aborted; 100 aborts leave KV state and the engine unchanged', async () => {
    const { engine, transformer } = await makeEngine({ delayMs: 0, script: (h) => (h.length % 2 ? 97 : 98) });
    const snapshot = () => engine.context.kv.all().map((s) => ({ tokens: [...s.tokens], refs: s.refs }));
    await engine.chat.completions.create({ messages: [sys, user('baseline')], max_tokens: 4, seed: 9 });
    const before = snapshot();
    for (let i = 0; i < 100; i++) {
      const ac = new AbortController();
      const stream = await engine.chat.completions.create({
        messages: [sys, user(`abort ${i % 7}`)],
        stream: true,
        signal: ac.signal,
        max_tokens: 50,
        temperature: 0,
      });
      let n = 0;
      const e = await (async () => {
        try {
          for await (const _ of stream) if (++n === 3) ac.abort();
        } catch (x) {
          return x;
        }
        return null;
      })();
      expect(isLlmError(e, 'aborted')).toBe(true);
    }
    await engine.settled();
    expect(engine.context.kv.all().every((s) => s.refs === 0)).toBe(true);
    // The baseline conversation is still cached and the engine still answers identically.
    const after = await engine.chat.completions.create({ messages: [sys, user('baseline')], max_tokens: 4, seed: 9 });
    expect(after.usage.prompt_tokens_details.cached_tokens).toBeGreaterThan(0);
    const now = snapshot();
    expect(now.length).toBe(before.length);
    expect(now.map((s) => s.refs)).toEqual(before.map((s) => s.refs));
    expect(transformer.counters.destroyed).toBe(false);
  });

  it('breaking out of a stream cancels the request and frees the engine', async () => {
    const { engine } = await makeEngine({ delayMs: 1 });
    const stream = await engine.chat.completions.create({ messages: [user('long')], stream: true, max_tokens: 200 });
    let n = 0;
    for await (const _ of stream) if (++n === 2) break;
    const r = await engine.chat.completions.create({ messages: [user('next')], max_tokens: 2 });
    expect(r.usage.completion_tokens).toBe(2);
  });

  it('an abort while queued rejects without running', async () => {
    const { engine } = await makeEngine({ delayMs: 2 });
    const first = engine.chat.completions.create({ messages: [user('a')], max_tokens: 5 });
    const ac = new AbortController();
    const second = engine.chat.completions.create({ messages: [user('b')], max_tokens: 5, signal: ac.signal });
    ac.abort();
    expect((await errorOf(second)).code).toBe('aborted');
    await first;
  });

  it('unload during a request rejects it cleanly and releases the model', async () => {
    const { engine, transformer } = await makeEngine({ delayMs: 2 });
    const stream = await engine.chat.completions.create({ messages: [user('a')], stream: true, max_tokens: 100 });
    const queued = errorOf(engine.chat.completions.create({ messages: [user('b')], max_tokens: 5 }));
    const reading = errorOf(
      (async () => {
        for await (const _ of stream) {
          /* drain */
        }
      })(),
    );
    await new Promise((r) => setTimeout(r, 10));
    await engine.unload();
    const e1 = await reading;
    const e2 = await queued;
    for (const e of [e1, e2]) {
      expect(e.code).toBe('aborted');
      expect(e.details?.reason).toBe('unloaded');
    }
    expect(transformer.counters.destroyed).toBe(true);
    const e3 = await errorOf(engine.chat.completions.create({ messages: [user('c')] }));
    expect(e3.code).toBe('invalid-request');
    await engine.unload(); // idempotent
  });

  it('tokenize, detokenize and stats', async () => {
    const { engine } = await makeEngine({ script: spellScript('fine') });
    const ids = await engine.tokenize('<|im_start|>hé');
    expect(ids).toEqual([256, 258, 104, 195, 169]);
    expect(await engine.detokenize(ids)).toBe('hé');
    expect(await engine.detokenize(ids, { renderSpecial: true })).toBe('<s><|im_start|>hé');
    await expect(engine.detokenize([9999])).rejects.toSatisfy((e) => isLlmError(e, 'invalid-request'));
    await engine.chat.completions.create({ messages: [user('x')], temperature: 0 });
    const s = await engine.stats();
    expect(s.requests).toBe(1);
    expect(s.prefillTokens).toBeGreaterThan(0);
    expect(s.decodeTokens).toBe(4);
    expect(s.timeToFirstTokenMs).toBeGreaterThan(0);
    expect(s.promptCache.lookups).toBe(1);
    const e: Engine = engine;
    expect(e.info.backend.reason).toBe('requested');
  });
});
