/**
 * An answer that `max_tokens` cuts while it writes tool calls: `finish_reason` is 'length' (as llama.cpp's server
 * reports whenever the limit stopped generation), whole and streamed; the calls finished before the cut are returned,
 * the unfinished one stays text in the whole answer (a stream has sent it as far as it was written).
 */
import { describe, expect, it } from 'vitest';
import { createChatFormatter } from '../../../src/api/chat-formatter.js';
import { createEngineFromParts, type LocalEngine } from '../../../src/api/local-engine.js';
import type { ChatCompletionChunk } from '../../../src/api/types.js';
import { createFakeTokenizer, createFakeTransformer, spellAfterPrompt } from '../engine/fake-model.js';

const TEMPLATE =
  '{%- if tools %}<|im_start|>system\n<tools>{% for t in tools %}{{ t | tojson }}{% endfor %}</tools><|im_end|>\n{%- endif %}' +
  '{%- for m in messages %}<|im_start|>{{ m.role }}\n{%- if m.content %}{{ m.content }}{%- endif %}<|im_end|>\n{%- endfor %}' +
  '{%- if add_generation_prompt %}<|im_start|>assistant\n{%- endif %}';
const TIME = { type: 'function' as const, function: { name: 'get_time', parameters: { type: 'object' } } };
const FIRST = '<tool_call>\n{"name": "get_time", "arguments": {"zone": "UTC"}}\n</tool_call>\n';
const SECOND = '<tool_call>\n{"name": "get_time", "arguments": {"zone": "Europe/Pa';

async function engineSpelling(output: string): Promise<LocalEngine> {
  const tokenizer = createFakeTokenizer();
  return (await createEngineFromParts({
    transformer: createFakeTransformer({ script: spellAfterPrompt(output), contextLength: 2048 }),
    tokenizer,
    chat: createChatFormatter(tokenizer, { template: TEMPLATE }),
    modelIdentity: 'fake:cutoff',
    backend: { name: 'fake', description: 'fake', reason: 'requested' },
    contextLength: 2048,
    slots: 1,
  })) as LocalEngine;
}

describe('an answer cut by max_tokens while calling', () => {
  const messages = [{ role: 'user' as const, content: 'Time?' }];
  const max_tokens = new TextEncoder().encode(FIRST + SECOND).length; // byte tokens: cut inside the second call

  it("finish_reason is 'length'; the finished call comes back, the cut one stays text (whole and streamed)", async () => {
    const engine = await engineSpelling(`${FIRST}${SECOND}"}}\n</tool_call>`);
    const req = { messages, tools: [TIME], parallel_tool_calls: true, temperature: 0, max_tokens };
    const r = await engine.chat.completions.create(req);
    expect(r.choices[0].finish_reason).toBe('length');
    expect(r.choices[0].message.tool_calls?.map((c) => JSON.parse(c.function.arguments))).toEqual([{ zone: 'UTC' }]);
    expect(r.choices[0].message.content).toBe(SECOND);
    const chunks: ChatCompletionChunk[] = [];
    for await (const c of await engine.chat.completions.create({ ...req, stream: true })) chunks.push(c);
    expect(chunks.at(-1)!.choices[0].finish_reason).toBe('length');
    // The finished call streams whole; the cut one went out as far as it was written (its arguments unfinished).
    const parts = chunks.flatMap((c) => c.choices[0].delta.tool_calls ?? []);
    const args = (i: number) =>
      parts
        .filter((p) => p.index === i)
        .map((p) => p.function.arguments ?? '')
        .join('');
    expect(args(0)).toBe('{"zone":"UTC"}');
    expect(args(1)).toBe('{"zone":"Europe/Pa');
  });

  it("a complete call still finishes with 'tool_calls'", async () => {
    const engine = await engineSpelling(FIRST);
    const r = await engine.chat.completions.create({ messages, tools: [TIME], temperature: 0 });
    expect(r.choices[0].finish_reason).toBe('tool_calls');
  });
});
