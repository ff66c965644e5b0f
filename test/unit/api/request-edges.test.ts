/**
 * Issue #21 item 7, the API's edges: fields the engine does not implement are refused by name (never silently
 * ignored) while the defaults OpenAI clients send are accepted; stop strings are capped in length and count and are
 * matched with bounded work per token (an operation count, not timing), with the same results as a plain rescan;
 * when the context fills before `max_tokens`, the answer ends with 'length' and usage never exceeds the context.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/api/create-engine.js';
import type { Engine } from '../../../src/api/engine.js';
import type { ChatCompletionRequest, Completion, CompletionChunk, CompletionRequest } from '../../../src/api/types.js';
import { normalizeChatRequest, normalizeCompletionRequest } from '../../../src/api/validate-request.js';
import { MAX_STOP_LENGTH, StopMatcher } from '../../../src/engine/stop.js';
import { llmError, thrownLlmError } from '../../helpers/llm-error.js';
import { mulberry32 } from '../../helpers/mulberry32.js';
import { sharedPath } from '../../helpers/shared-path.js';

const VOCAB = 512;
const messages = [{ role: 'user' as const, content: 'hi' }];
const chat = (extra: Record<string, unknown>): ChatCompletionRequest =>
  ({ messages, ...extra }) as ChatCompletionRequest;
const completion = (extra: Record<string, unknown>): CompletionRequest =>
  ({ prompt: 'hi', ...extra }) as CompletionRequest;

describe('request fields', () => {
  const refusedChat: [string, unknown][] = [
    ['tools', 'get_weather'],
    ['tool_choice', 'sometimes'],
    ['response_format', 'json'],
    ['logprobs', 'yes'],
    ['top_logprobs', 30],
    ['n', 9],
    ['n', 0],
    ['n', 1.5],
    ['functions', [{ name: 'f' }]],
    ['stream_options', { include_usage: true, extra: 1 }],
    ['max_token', 5], // a misspelling must not pass unnoticed
    ['reasoning_effort', 'extreme'],
  ];
  for (const [field, value] of refusedChat) {
    it(`chat: ${field} = ${JSON.stringify(value)} is refused naming the field`, () => {
      const e = thrownLlmError(() => normalizeChatRequest(chat({ [field]: value }), VOCAB));
      expect(e.code).toBe('invalid-request');
      expect(e.details?.field).toBe(field);
      expect(e.message).toContain(field);
    });
  }

  const refusedCompletion: [string, unknown][] = [
    ['suffix', 'end'],
    ['best_of', 2],
    ['logprobs', 21],
    ['messages', messages],
    ['tools', []],
  ];
  for (const [field, value] of refusedCompletion) {
    it(`completions: ${field} = ${JSON.stringify(value)} is refused naming the field`, () => {
      const e = thrownLlmError(() => normalizeCompletionRequest(completion({ [field]: value }), VOCAB));
      expect(e.details?.field).toBe(field);
    });
  }

  it('the defaults OpenAI clients send are accepted as no-ops', () => {
    const defaults = {
      n: 1,
      logprobs: false,
      top_logprobs: null,
      presence_penalty: 0,
      frequency_penalty: 0,
      user: 'u-1',
      stream_options: { include_usage: true },
      response_format: { type: 'text' },
      tool_choice: 'none',
      tools: null,
      parallel_tool_calls: true,
      store: false,
      model: 'x',
      stream: false,
      signal: undefined,
      seed: undefined,
    };
    expect(() => normalizeChatRequest(chat(defaults), VOCAB)).not.toThrow();
    expect(() =>
      normalizeCompletionRequest(
        completion({ ...defaults, best_of: 1, suffix: null, logprobs: null, echo: false }),
        VOCAB,
      ),
    ).not.toThrow();
  });

  it('max_completion_tokens is max_tokens under its newer name; conflicting values are refused', () => {
    expect(normalizeChatRequest(chat({ max_completion_tokens: 7 }), VOCAB).maxTokens).toBe(7);
    expect(normalizeChatRequest(chat({ max_completion_tokens: 7, max_tokens: 7 }), VOCAB).maxTokens).toBe(7);
    expect(
      thrownLlmError(() => normalizeChatRequest(chat({ max_completion_tokens: 7, max_tokens: 8 }), VOCAB)).details
        ?.field,
    ).toBe('max_completion_tokens');
    expect(thrownLlmError(() => normalizeChatRequest(chat({ max_completion_tokens: 0 }), VOCAB)).details?.field).toBe(
      'max_completion_tokens',
    );
  });
});

describe('stop strings', () => {
  it(`a stop string longer than ${MAX_STOP_LENGTH} characters is refused naming its index; more than 16 too`, () => {
    const long = 'x'.repeat(MAX_STOP_LENGTH + 1);
    const e = thrownLlmError(() => normalizeChatRequest(chat({ stop: ['ok', long] }), VOCAB));
    expect(e.code).toBe('invalid-request');
    expect(e.details?.field).toBe('stop[1]');
    expect(e.message).toContain(String(MAX_STOP_LENGTH));
    expect(thrownLlmError(() => normalizeCompletionRequest(completion({ stop: long }), VOCAB)).details?.field).toBe(
      'stop',
    );
    expect(() => normalizeChatRequest(chat({ stop: ['y'.repeat(MAX_STOP_LENGTH)] }), VOCAB)).not.toThrow();
    expect(
      thrownLlmError(() => normalizeChatRequest(chat({ stop: Array.from({ length: 17 }, (_, i) => `s${i}`) }), VOCAB))
        .details?.field,
    ).toBe('stop');
  });

  it('matching work grows with the text × the stops, not with the output so far (adversarial near-misses)', () => {
    // 16 stops of 256 characters that all almost match a long run of 'a': the worst case for naive suffix checks.
    const stops = Array.from(
      { length: 16 },
      (_, i) => 'a'.repeat(MAX_STOP_LENGTH - 1 - i) + String.fromCharCode(98 + i) + 'a'.repeat(i),
    );
    const m = new StopMatcher(stops);
    let chars = 0;
    let emitted = 0;
    for (let t = 0; t < 20_000; t++) {
      const piece = t % 1000 === 999 ? 'z' : 'a';
      chars += piece.length;
      const r = m.push(piece);
      expect(r.stopped).toBe(false);
      emitted += r.text.length;
    }
    expect(emitted).toBeGreaterThan(chars - MAX_STOP_LENGTH);
    expect(m.comparisons).toBeLessThanOrEqual(2 * chars * stops.length);
  });

  it('gives the same output as a full rescan on random text and stops', () => {
    const rand = mulberry32(21);
    const pick = (alphabet: string, n: number): string =>
      Array.from({ length: n }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('');
    for (let trial = 0; trial < 400; trial++) {
      const stops = Array.from({ length: 1 + Math.floor(rand() * 4) }, () => pick('abc', 1 + Math.floor(rand() * 4)));
      const pieces = Array.from({ length: 1 + Math.floor(rand() * 12) }, () => pick('abcd', Math.floor(rand() * 4)));
      const m = new StopMatcher(stops);
      let out = '';
      let stopped = false;
      for (const p of pieces) {
        const r = m.push(p);
        out += r.text;
        if (r.stopped) {
          stopped = true;
          break;
        }
      }
      if (!stopped) out += m.flush();
      expect({ out, stopped }).toEqual(reference(stops, pieces));
    }
  });
});

/** The definition: after each piece, the earliest complete stop in all text so far ends the output there. */
function reference(stops: string[], pieces: string[]): { out: string; stopped: boolean } {
  let text = '';
  for (const p of pieces) {
    text += p;
    let at = -1;
    for (const s of stops) {
      const i = text.indexOf(s);
      if (i >= 0 && (at < 0 || i < at)) at = i;
    }
    if (at >= 0) return { out: text.slice(0, at), stopped: true };
  }
  return { out: text, stopped: false };
}

describe('max_tokens beyond the context (stories260K, contextLength 32)', () => {
  const CTX = 32;
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({
      model: sharedPath('models', 'stories260K.gguf'),
      backend: 'cpu',
      contextLength: CTX,
      warmup: false,
    });
  });
  afterAll(async () => {
    await engine?.unload();
  });

  it("ends with finish_reason 'length' when the context fills; usage never exceeds it", async () => {
    const r = (await engine.completions.create({
      prompt: 'Once upon a time',
      temperature: 0,
      max_tokens: 1000,
    })) as Completion;
    expect(r.choices[0].finish_reason).toBe('length');
    expect(r.usage.total_tokens).toBe(CTX);
    expect(r.usage.prompt_tokens + r.usage.completion_tokens).toBe(CTX);
    expect(r.choices[0].text.length).toBeGreaterThan(0);
  });

  it('streaming reports the same finish_reason and usage', async () => {
    const whole = (await engine.completions.create({
      prompt: 'Once upon a time',
      temperature: 0,
      max_tokens: 1000,
    })) as Completion;
    const stream = (await engine.completions.create({
      prompt: 'Once upon a time',
      temperature: 0,
      max_tokens: 1000,
      stream: true,
    })) as AsyncIterable<CompletionChunk>;
    let text = '';
    let last: CompletionChunk | undefined;
    for await (const c of stream) {
      text += c.choices[0].text;
      last = c;
    }
    expect(text).toBe(whole.choices[0].text);
    expect(last?.choices[0].finish_reason).toBe('length');
    expect(last?.usage?.total_tokens).toBe(whole.usage.total_tokens);
    expect(last?.usage?.completion_tokens).toBe(whole.usage.completion_tokens);
  });

  it('max_tokens within the room: exactly max_tokens tokens, length', async () => {
    const r = (await engine.completions.create({
      prompt: 'Once upon a time',
      temperature: 0,
      max_tokens: 5,
    })) as Completion;
    expect(r.usage.completion_tokens).toBe(5);
    expect(r.choices[0].finish_reason).toBe('length');
  });

  it('a malformed tool is refused through the engine too, before any work', async () => {
    const e = await llmError(engine.chat.completions.create(chat({ tools: [{ type: 'function' }] })));
    expect(e.code).toBe('invalid-request');
    expect(e.details?.field).toBe('tools[0]');
  });
});
