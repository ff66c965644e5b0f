/**
 * `n` choices (1…8) on the in-thread Engine over the fake transformer: the prompt is prefilled once and the choices
 * decode together (one `evalRows` step per token for all of them), each seeded with seed + i (reproducible, distinct,
 * choice 0 equal to the one-choice answer); streamed chunks carry their choice's `index` and concatenate to the
 * whole answer; usage counts the prompt once and every choice's tokens; more choices than slots run in groups with
 * the same result; an abort frees every slot.
 */
import { describe, expect, it } from 'vitest';
import { createChatMlFormatter } from '../../../src/api/chat-formatter.js';
import { createEngineFromParts, type LocalEngine } from '../../../src/api/local-engine.js';
import type { ChatCompletionChunk, CompletionChunk } from '../../../src/api/types.js';
import { isLlmError } from '../../../src/errors.js';
import { createFakeTokenizer, createFakeTransformer, type FakeTransformerOptions } from '../engine/fake-model.js';

async function makeEngine(o: FakeTransformerOptions = {}) {
  const transformer = createFakeTransformer({ nSlots: 4, ...o });
  const tokenizer = createFakeTokenizer();
  const engine = (await createEngineFromParts({
    transformer,
    tokenizer,
    chat: createChatMlFormatter(tokenizer),
    modelIdentity: 'fake:1',
    backend: { name: 'fake', description: 'fake', reason: 'requested' },
    contextLength: 256,
    slots: o.nSlots ?? 4,
    warmup: false,
  })) as LocalEngine;
  return { engine, transformer };
}

const messages = [{ role: 'user' as const, content: 'tell me' }];
const sampled = { temperature: 1, top_k: 0, top_p: 1, min_p: 0, seed: 42, max_tokens: 12 };

describe('n choices', () => {
  it('prefills once, decodes the choices together, seeds choice i with seed + i', async () => {
    const { engine, transformer } = await makeEngine();
    const r = await engine.chat.completions.create({ messages, ...sampled, n: 4 });
    expect(r.choices.map((c) => c.index)).toEqual([0, 1, 2, 3]);
    const texts = r.choices.map((c) => c.message.content);
    expect(new Set(texts).size).toBeGreaterThan(1); // distinct choices
    // One prefill of the whole prompt, then batched steps of up to 4 rows (never one eval per choice per token).
    const calls = transformer.counters.calls;
    expect(calls.filter(([pos]) => pos === 0)).toEqual([[0, r.usage.prompt_tokens, 'last']]);
    expect(calls.some(([, n, l]) => l === 'all' && n === 4)).toBe(true);
    expect(calls.filter(([, n]) => n === 1)).toHaveLength(0); // no choice ever decodes alone here
    expect(transformer.counters.copies).toBeGreaterThanOrEqual(3);
    // usage: the prompt once, every choice's tokens (one logprobs entry per token).
    const withLp = await engine.chat.completions.create({ messages, ...sampled, n: 4, logprobs: true });
    const tokens = withLp.choices.reduce((sum, c) => sum + c.logprobs!.content!.length, 0);
    expect(withLp.usage.completion_tokens).toBe(tokens);
    expect(withLp.usage.total_tokens).toBe(withLp.usage.prompt_tokens + tokens);
    // Reproducible, and choice i is what a one-choice request with seed 42 + i gives.
    const again = await engine.chat.completions.create({ messages, ...sampled, n: 4 });
    expect(again.choices.map((c) => c.message.content)).toEqual(texts);
    for (let i = 0; i < 4; i++) {
      const one = await engine.chat.completions.create({ messages, ...sampled, seed: 42 + i });
      expect(one.choices[0]!.message.content, `choice ${i}`).toBe(texts[i]);
      expect(one.choices[0]!.finish_reason).toBe(r.choices[i]!.finish_reason);
    }
    await engine.settled();
    expect(engine.context.kv.all().every((s) => s.refs === 0)).toBe(true);
  });

  it('more choices than slots run in groups with the same choices', async () => {
    const wide = await makeEngine({ nSlots: 8 });
    const narrow = await makeEngine({ nSlots: 2 });
    const a = await wide.engine.chat.completions.create({ messages, ...sampled, n: 5 });
    const b = await narrow.engine.chat.completions.create({ messages, ...sampled, n: 5 });
    expect(b.choices.map((c) => c.message.content)).toEqual(a.choices.map((c) => c.message.content));
    expect(b.usage).toEqual({ ...a.usage, prompt_tokens_details: b.usage.prompt_tokens_details });
    const single = await makeEngine({ nSlots: 1 });
    const c = await single.engine.chat.completions.create({ messages, ...sampled, n: 3 });
    expect(c.choices.map((x) => x.message.content)).toEqual(a.choices.slice(0, 3).map((x) => x.message.content));
  });

  it('streams chunks tagged with their index that concatenate to each choice; usage sums the choices', async () => {
    const { engine } = await makeEngine();
    const whole = await engine.chat.completions.create({ messages, ...sampled, n: 3 });
    const stream = await engine.chat.completions.create({ messages, ...sampled, n: 3, stream: true });
    const chunks: ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    const text = ['', '', ''];
    const finishes: (string | null)[] = [null, null, null];
    for (const c of chunks) {
      for (const ch of c.choices) {
        text[ch.index] += ch.delta.content ?? '';
        if (ch.finish_reason) finishes[ch.index] = ch.finish_reason;
      }
    }
    expect(text).toEqual(whole.choices.map((c) => c.message.content));
    expect(finishes).toEqual(whole.choices.map((c) => c.finish_reason));
    expect(chunks.slice(0, 3).map((c) => [c.choices[0]!.index, c.choices[0]!.delta.role])).toEqual([
      [0, 'assistant'],
      [1, 'assistant'],
      [2, 'assistant'],
    ]);
    expect(chunks.filter((c) => c.usage !== null)).toHaveLength(1);
    const { prompt_tokens_details: _, ...usage } = chunks.at(-1)!.usage!;
    const { prompt_tokens_details: __, ...wholeUsage } = whole.usage;
    expect(usage).toEqual(wholeUsage);
  });

  it('completions: n choices with echo and logprobs, whole and streamed', async () => {
    const { engine } = await makeEngine();
    const req = { prompt: 'abc', ...sampled, max_tokens: 5, n: 2, echo: true, logprobs: 2 };
    const r = await engine.completions.create(req);
    expect(r.choices).toHaveLength(2);
    for (const c of r.choices) expect(c.text.startsWith('abc')).toBe(true);
    const stream = await engine.completions.create({ ...req, stream: true });
    const text = ['', ''];
    const lpTokens = ['', ''];
    for await (const c of stream as AsyncIterable<CompletionChunk>) {
      for (const ch of c.choices) {
        text[ch.index] += ch.text;
        lpTokens[ch.index] += ch.logprobs?.tokens.join('') ?? '';
      }
    }
    expect(text).toEqual(r.choices.map((c) => c.text));
    expect(lpTokens).toEqual(r.choices.map((c) => c.logprobs!.tokens.join('')));
  });

  it('an abort mid-stream rejects and frees every slot; the engine answers the next request', async () => {
    const { engine } = await makeEngine({ delayMs: 1 });
    const ac = new AbortController();
    const stream = await engine.chat.completions.create({
      messages,
      ...sampled,
      max_tokens: 100,
      n: 4,
      stream: true,
      signal: ac.signal,
    });
    let seen = 0;
    const e = await (async () => {
      try {
        for await (const _ of stream) if (++seen === 8) ac.abort();
      } catch (x) {
        return x;
      }
      return null;
    })();
    expect(isLlmError(e, 'aborted')).toBe(true);
    await engine.settled();
    expect(engine.context.kv.all().every((s) => s.refs === 0)).toBe(true);
    const next = await engine.chat.completions.create({ messages, ...sampled, n: 2, max_tokens: 3 });
    expect(next.choices).toHaveLength(2);
  });
});
