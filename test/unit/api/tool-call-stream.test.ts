/**
 * Tool-call arguments streamed as they are written: for every prefix of each JSON-argument syntax's output, the calls
 * read so far (tool-call-stream.ts) have the final name and arguments that are a prefix of what the parser returns
 * for the whole output (equal at the end); through the engine, a Hermes call's `delta.tool_calls` fragments start
 * with id + name, arrive in several chunks before the final one and concatenate to the call (two parallel calls too).
 */
import { describe, expect, it } from 'vitest';
import { ChatAnswer, loadToolCallReader } from '../../../src/api/chat-answer.js';
import { createChatFormatter } from '../../../src/api/chat-formatter.js';
import { createEngineFromParts, type LocalEngine } from '../../../src/api/local-engine.js';
import type { ChatCompletionChunk, ChatToolCallDelta } from '../../../src/api/types.js';
import type { ToolCallFormat } from '../../../src/tools/tool-call-format.js';
import { parseToolCalls } from '../../../src/tools/tool-call-parse.js';
import { minifyJson, partialToolCalls } from '../../../src/tools/tool-call-stream.js';
import { createFakeTokenizer, createFakeTransformer, spellAfterPrompt } from '../engine/fake-model.js';

const tools = [
  { name: 'get_weather', parameters: { type: 'object' } },
  { name: 'get_time', parameters: { type: 'object' } },
];

const CASES: [ToolCallFormat, string][] = [
  [
    'hermes',
    'Let me check.<tool_call>\n{"name": "get_weather", "arguments": {"city": "New York, \\"NY\\"", "days": 12, "tags": [1, 2.5, true, null]}}\n</tool_call>',
  ],
  [
    'hermes',
    '<tool_call>{"name":"get_time","arguments":{"zone":"UTC"}}</tool_call>\n<tool_call>{"name":"get_weather","arguments":{"city":"Oslo","days":1}}</tool_call>',
  ],
  ['llama3', '<|python_tag|>{"name": "get_time", "parameters": {"zone": "CET"}}'],
  [
    'mistral',
    '[TOOL_CALLS][{"name": "get_time", "arguments": {"zone": "UTC"}, "id": "abc123def"}, {"name": "get_weather", "arguments": {"city": "Rome"}}]',
  ],
  ['mistral-args', 'Sure.[TOOL_CALLS]get_time[CALL_ID]x1[ARGS]{"zone": "UTC", "n": -3}'],
  [
    'harmony',
    '<|channel|>analysis<|message|>Need time.<|end|><|start|>assistant<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{"zone": "UTC"}<|call|>',
  ],
  ['granite', '<|tool_call|>[{"name": "get_time", "arguments": {"zone": "UTC"}}]'],
  [
    'qwen3-coder',
    '<tool_call>\n<function=get_weather>\n<parameter=city>\n123 Main\n</parameter>\n<parameter=days>\n3\n</parameter>\n<parameter=tags>\n["a", "b"]\n</parameter>\n</function>\n</tool_call>',
  ],
  ['phi4', 'functools[{"name": "get_time", "arguments": {"zone": "CET"}}]'],
];

describe('tool calls read while written', () => {
  it('minifies JSON outside strings only', () => {
    expect(minifyJson('{ "a" : "x y\\" z",\n "b": [1, 2] }')).toBe('{"a":"x y\\" z","b":[1,2]}');
  });

  for (const [format, text] of CASES) {
    it(`every prefix gives prefixes of the final calls (${format}: ${text.slice(0, 40)}…)`, () => {
      const final = parseToolCalls(format, text, tools).calls;
      expect(final.length).toBeGreaterThan(0);
      let last: string[] = [];
      let grew = 0;
      for (let p = 0; p <= text.length; p++) {
        const calls = partialToolCalls(format, text.slice(0, p), tools)!;
        expect(calls.length).toBeLessThanOrEqual(final.length);
        calls.forEach((c, i) => {
          expect(c.name, `prefix ${p}`).toBe(final[i]!.name);
          expect(final[i]!.arguments.startsWith(c.args), `prefix ${p}: ${c.args}`).toBe(true);
          if (last[i] !== undefined && c.args !== last[i]) {
            expect(c.args.startsWith(last[i]!)).toBe(true);
            grew++;
          }
        });
        last = calls.map((c) => c.args);
      }
      const whole = partialToolCalls(format, text, tools)!;
      expect(whole.map((c) => [c.name, c.args])).toEqual(final.map((c) => [c.name, c.arguments]));
      expect(grew).toBeGreaterThan(3); // arguments arrive piece by piece
      if (format === 'mistral-args') expect(whole[0]!.id).toBe('x1');
    });
  }

  it('lfm2 and gemma4 are not read while written: their calls go out whole once they parse', async () => {
    for (const f of ['lfm2', 'gemma4'] as const) expect(partialToolCalls(f, 'x')).toBeNull();
    const text = 'Checking.<|tool_call_start|>[get_weather(city="Rome", days=2)]<|tool_call_end|>';
    const answer = new ChatAnswer({
      tools: {
        format: 'lfm2',
        spec: { tools, raw: [], choice: 'auto', parallel: true },
        read: await loadToolCallReader(),
      },
    });
    const pushed: ChatToolCallDelta[][] = [];
    for (let i = 0; i < text.length; i += 4) pushed.push(answer.push(text.slice(i, i + 4)).calls);
    const first = pushed.findIndex((c) => c.length > 0);
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(pushed.length - 1); // before the output ends
    expect(pushed[first]).toEqual([
      {
        index: 0,
        id: expect.stringMatching(/^call_/),
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Rome","days":2}' },
      },
    ]);
    const end = answer.end();
    expect(end.callDeltas).toEqual([]);
    expect(end.calls[0]!.id).toBe(pushed[first]![0]!.id);
  });
});

const HERMES_TEMPLATE =
  '{%- if tools %}<|im_start|>system\n<tools>{% for t in tools %}{{ t | tojson }}{% endfor %}</tools><|im_end|>\n{%- endif %}' +
  '{%- for m in messages %}<|im_start|>{{ m.role }}\n{%- if m.content %}{{ m.content }}{%- endif %}<|im_end|>\n{%- endfor %}' +
  '{%- if add_generation_prompt %}<|im_start|>assistant\n{%- endif %}';

const WEATHER = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string', maxLength: 20 }, days: { type: 'integer', minimum: 1, maximum: 7 } },
      required: ['city', 'days'],
      additionalProperties: false,
    },
  },
};

async function hermesEngine(output: string): Promise<LocalEngine> {
  const tokenizer = createFakeTokenizer();
  return (await createEngineFromParts({
    transformer: createFakeTransformer({ script: spellAfterPrompt(output), contextLength: 2048 }),
    tokenizer,
    chat: createChatFormatter(tokenizer, { template: HERMES_TEMPLATE }),
    modelIdentity: 'fake:tools',
    backend: { name: 'fake', description: 'fake', reason: 'requested' },
    contextLength: 2048,
    slots: 1,
  })) as LocalEngine;
}

async function streamed(engine: LocalEngine, parallel: boolean) {
  const chunks: ChatCompletionChunk[] = [];
  for await (const c of await engine.chat.completions.create({
    messages: [{ role: 'user', content: 'Weather?' }],
    tools: [WEATHER],
    parallel_tool_calls: parallel,
    temperature: 0,
    stream: true,
  }))
    chunks.push(c);
  return chunks;
}

describe('streamed tool calls through the engine', () => {
  const call = (city: string, days: number) =>
    `<tool_call>\n{"name": "get_weather", "arguments": {"city": "${city}", "days": ${days}}}\n</tool_call>`;

  it('argument fragments arrive as the call is written and concatenate to the call', async () => {
    const engine = await hermesEngine(`Checking.${call('Paris', 2)}`);
    const whole = await engine.chat.completions.create({
      messages: [{ role: 'user', content: 'Weather?' }],
      tools: [WEATHER],
      temperature: 0,
    });
    const want = whole.choices[0].message.tool_calls![0]!;
    const chunks = await streamed(engine, true);
    const withCalls = chunks
      .map((c, k) => [k, c.choices[0]!.delta.tool_calls ?? []] as const)
      .filter(([, f]) => f.length);
    const frags: ChatToolCallDelta[] = withCalls.flatMap(([, f]) => f);
    expect(frags[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'get_weather' } });
    expect(frags[0]!.id).toMatch(/^call_/);
    expect(frags.slice(1).every((f) => f.id === undefined && f.function.name === undefined)).toBe(true);
    expect(frags.map((f) => f.function.arguments).join('')).toBe(want.function.arguments);
    expect(JSON.parse(want.function.arguments)).toEqual({ city: 'Paris', days: 2 });
    // Several fragment chunks, all before the final chunk (not one chunk at the end).
    expect(withCalls.length).toBeGreaterThan(5);
    expect(withCalls.filter(([k]) => k < chunks.length - 2).length).toBeGreaterThan(5);
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('tool_calls');
    expect(chunks.map((c) => c.choices[0]!.delta.content ?? '').join('')).toBe('Checking.');
  });

  it('parallel calls stream by index; without parallel_tool_calls only the first', async () => {
    const engine = await hermesEngine(`${call('Oslo', 1)}\n${call('Rome', 3)}`);
    const byIndex = (chunks: ChatCompletionChunk[]) => {
      const args: string[] = [];
      for (const c of chunks)
        for (const f of c.choices[0]!.delta.tool_calls ?? [])
          args[f.index] = (args[f.index] ?? '') + f.function.arguments;
      return args.map((a) => JSON.parse(a) as unknown);
    };
    expect(byIndex(await streamed(engine, true))).toEqual([
      { city: 'Oslo', days: 1 },
      { city: 'Rome', days: 3 },
    ]);
    expect(byIndex(await streamed(engine, false))).toEqual([{ city: 'Oslo', days: 1 }]);
  });
});
