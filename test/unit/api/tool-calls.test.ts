/**
 * Tool calling: the call syntax detected from templates, calls parsed from each family's native syntax (the
 * shapes llama.cpp's chat parser tests use), the streamed gate, and through the engine: a model that writes a
 * Hermes call gets `tool_calls` + `finish_reason: 'tool_calls'` (whole and streamed, deltas concatenating to the
 * call), and stories260K — which knows nothing of tools — forced by `tool_choice: 'required'` / a named function
 * writes calls whose arguments parse and match the function's schema. Bad tool fields are refused by name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChatFormatter } from '../../../src/api/chat-formatter.js';
import { createEngine } from '../../../src/api/create-engine.js';
import type { Engine } from '../../../src/api/engine.js';
import { createEngineFromParts, type LocalEngine } from '../../../src/api/local-engine.js';
import type { ChatCompletionChunk } from '../../../src/api/types.js';
import { isLlmError } from '../../../src/errors.js';
import { detectToolCallFormat, type ToolCallFormat } from '../../../src/tools/tool-call-format.js';
import { parseToolCalls } from '../../../src/tools/tool-call-parse.js';
import { ToolStreamGate } from '../../../src/tools/tool-stream-gate.js';
import { sharedPath } from '../../helpers/shared-path.js';
import { createFakeTokenizer, createFakeTransformer, spellAfterPrompt } from '../engine/fake-model.js';

const WEATHER = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Current weather',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string', maxLength: 20 }, days: { type: 'integer', minimum: 1, maximum: 7 } },
      required: ['city', 'days'],
      additionalProperties: false,
    },
  },
};
const TIME = {
  type: 'function' as const,
  function: {
    name: 'get_time',
    parameters: {
      type: 'object',
      properties: { zone: { enum: ['UTC', 'CET'] } },
      required: ['zone'],
      additionalProperties: false,
    },
  },
};
const tools = [WEATHER.function, TIME.function].map((f) => ({ name: f.name, parameters: f.parameters }));

describe('tool-call syntaxes', () => {
  it('detects the syntax from the template', () => {
    const cases: [string, ToolCallFormat][] = [
      ['{{ "<|channel|>" }} {{ tools }}', 'harmony'],
      ['[AVAILABLE_TOOLS] [TOOL_CALLS] {{ x }}', 'mistral'],
      ['[TOOL_CALLS]{{ name }}[ARGS]', 'mistral-args'],
      ['<|tool_list_start|>{{ tools }}<|tool_list_end|>', 'lfm2'],
      ['"List of tools: [" + tool', 'lfm2'],
      ['<|tool_call>call:', 'gemma4'],
      ['<tool_call>\n<function={{ n }}>\n<parameter={{ p }}>', 'qwen3-coder'],
      ['{%- if tools %}<tool_call>{{ t }}</tool_call>', 'hermes'],
      ['<|tool_call|>', 'granite'],
      ['<|tool|>{{ tools }}<|/tool|>', 'phi4'],
      ['<|start_header_id|>ipython<|end_header_id|> <|python_tag|>', 'llama3'],
    ];
    for (const [t, f] of cases) expect(detectToolCallFormat(t), t).toBe(f);
  });

  it('parses each family', () => {
    const cases: [ToolCallFormat, string, string, { name: string; args: unknown }[]][] = [
      [
        'hermes',
        'Let me check.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}\n</tool_call>',
        'Let me check.',
        [{ name: 'get_weather', args: { city: 'Paris', days: 2 } }],
      ],
      [
        'hermes',
        '<tool_call>{"name":"get_time","arguments":{"zone":"UTC"}}</tool_call>\n<tool_call>{"name":"get_weather","arguments":{"city":"Oslo","days":1}}</tool_call>',
        '',
        [
          { name: 'get_time', args: { zone: 'UTC' } },
          { name: 'get_weather', args: { city: 'Oslo', days: 1 } },
        ],
      ],
      [
        'qwen3-coder',
        '<tool_call>\n<function=get_weather>\n<parameter=city>\n123 Main\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>',
        '',
        [{ name: 'get_weather', args: { city: '123 Main', days: 3 } }],
      ],
      [
        'llama3',
        '<|python_tag|>{"name": "get_time", "parameters": {"zone": "CET"}}',
        '',
        [{ name: 'get_time', args: { zone: 'CET' } }],
      ],
      [
        'mistral',
        '[TOOL_CALLS][{"name": "get_time", "arguments": {"zone": "UTC"}, "id": "abc123def"}]',
        '',
        [{ name: 'get_time', args: { zone: 'UTC' } }],
      ],
      [
        'mistral-args',
        'Sure.[TOOL_CALLS]get_time[ARGS]{"zone": "UTC"}',
        'Sure.',
        [{ name: 'get_time', args: { zone: 'UTC' } }],
      ],
      [
        'harmony',
        '<|channel|>analysis<|message|>Need time.<|end|><|start|>assistant<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{"zone":"UTC"}',
        '',
        [{ name: 'get_time', args: { zone: 'UTC' } }],
      ],
      [
        'granite',
        '<|tool_call|>[{"name": "get_time", "arguments": {"zone": "UTC"}}]',
        '',
        [{ name: 'get_time', args: { zone: 'UTC' } }],
      ],
      [
        'phi4',
        'functools[{"name": "get_time", "arguments": {"zone": "CET"}}]',
        '',
        [{ name: 'get_time', args: { zone: 'CET' } }],
      ],
      [
        'lfm2',
        '<|tool_call_start|>[get_weather(city="Rome", days=2)]<|tool_call_end|>Checking.',
        'Checking.',
        [{ name: 'get_weather', args: { city: 'Rome', days: 2 } }],
      ],
      [
        'gemma4',
        '<|tool_call>call:get_weather{city:<|"|>Tokyo, JP<|"|>,days:4}<tool_call|>',
        '',
        [{ name: 'get_weather', args: { city: 'Tokyo, JP', days: 4 } }],
      ],
    ];
    for (const [format, text, content, calls] of cases) {
      const r = parseToolCalls(format, text, tools);
      expect(
        r.calls.map((c) => ({ name: c.name, args: JSON.parse(c.arguments) as unknown })),
        `${format}: ${text}`,
      ).toEqual(calls);
      if (format !== 'harmony') expect(r.content).toBe(content);
    }
    expect(parseToolCalls('hermes', 'no call <tool_call>{"broken"', tools)).toEqual({
      content: 'no call <tool_call>{"broken"',
      calls: [],
    });
  });

  it('the stream gate shows text up to a call, whatever the delta boundaries', () => {
    const text = 'Let me see. <tool_call>\n{"name": "x"}';
    for (const size of [1, 3, 100]) {
      const g = new ToolStreamGate(['<tool_call>']);
      let shown = '';
      for (let i = 0; i < text.length; i += size) shown += g.push(text.slice(i, i + size));
      expect(shown).toBe('Let me see. ');
      expect(g.calling).toBe(true);
    }
    const g = new ToolStreamGate(['<tool_call>']);
    expect(g.push('a <tool')).toBe('a ');
    expect(g.flush()).toBe('<tool');
  });
});

// A Qwen2.5-like template that renders tools (capability probes see `tools`) and calls in <tool_call> tags.
const HERMES_TEMPLATE =
  '{%- if tools %}<|im_start|>system\n<tools>{% for t in tools %}{{ t | tojson }}{% endfor %}</tools><|im_end|>\n{%- endif %}' +
  '{%- for m in messages %}<|im_start|>{{ m.role }}\n{%- if m.content %}{{ m.content }}{%- endif %}' +
  '{%- if m.tool_calls %}{% for c in m.tool_calls %}<tool_call>\n{"name": "{{ c.function.name }}", "arguments": {{ c.function.arguments }}}\n</tool_call>{% endfor %}{%- endif %}<|im_end|>\n{%- endfor %}' +
  '{%- if add_generation_prompt %}<|im_start|>assistant\n{%- endif %}';

describe('tool calls through the engine', () => {
  const CALL = 'Checking.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}\n</tool_call>';
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
  const messages = [{ role: 'user' as const, content: 'Weather in Paris?' }];

  it("a Hermes call becomes tool_calls with finish_reason 'tool_calls' (whole and streamed)", async () => {
    const engine = await hermesEngine(CALL);
    const r = await engine.chat.completions.create({ messages, tools: [WEATHER, TIME], temperature: 0 });
    expect(r.choices[0].finish_reason).toBe('tool_calls');
    expect(r.choices[0].message.content).toBe('Checking.');
    const call = r.choices[0].message.tool_calls![0];
    expect(call).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris', days: 2 });
    expect(call.id).toMatch(/^call_/);
    const chunks: ChatCompletionChunk[] = [];
    for await (const c of await engine.chat.completions.create({
      messages,
      tools: [WEATHER, TIME],
      temperature: 0,
      stream: true,
    }))
      chunks.push(c);
    expect(chunks.map((c) => c.choices[0].delta.content ?? '').join('')).toBe('Checking.');
    const parts = chunks.flatMap((c) => c.choices[0].delta.tool_calls ?? []);
    expect(
      parts
        .filter((p) => p.index === 0)
        .map((p) => p.function.arguments)
        .join(''),
    ).toBe(call.function.arguments);
    expect(chunks.at(-1)!.choices[0].finish_reason).toBe('tool_calls');
    // The next turn: the call and its result go back through the template.
    const next = await engine.chat.completions.create({
      messages: [
        ...messages,
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: call.id, content: '{"temp": 21}' },
      ],
      tools: [WEATHER, TIME],
      temperature: 0,
    });
    expect(next.usage.prompt_tokens).toBeGreaterThan(r.usage.prompt_tokens);
  });

  it("tool_choice 'none' leaves the text alone; bad tool fields are refused by name", async () => {
    const engine = await hermesEngine(CALL);
    const r = await engine.chat.completions.create({ messages, tools: [WEATHER], tool_choice: 'none', temperature: 0 });
    expect(r.choices[0].finish_reason).toBe('stop');
    expect(r.choices[0].message.tool_calls).toBeUndefined();
    const bad: [Record<string, unknown>, string][] = [
      [{ tools: [WEATHER], tool_choice: { type: 'function', function: { name: 'nope' } } }, 'tool_choice'],
      [{ tool_choice: 'required' }, 'tool_choice'],
      [{ tools: [WEATHER, WEATHER] }, 'tools[1].function.name'],
      [{ tools: [WEATHER], parallel_tool_calls: 'yes' }, 'parallel_tool_calls'],
      [{ tools: [WEATHER], response_format: { type: 'json_object' } }, 'tools'],
    ];
    for (const [extra, field] of bad) {
      const e = await engine.chat.completions.create({ messages, ...extra } as never).catch((x: unknown) => x);
      expect(isLlmError(e, 'invalid-request') && e.details?.field, JSON.stringify(extra)).toBe(field);
    }
  });
});

describe('forced calls on stories260K (generic tool prompt: its template has no tools)', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({
      model: sharedPath('models', 'stories260K.gguf'),
      backend: 'cpu',
      contextLength: 1024,
    });
  });
  afterAll(() => engine.unload());

  it("'required' and a named function force calls whose arguments match the schema", async () => {
    for (const [choice, seed] of [
      ['required', 1],
      ['required', 2],
      [{ type: 'function', function: { name: 'get_time' } }, 3],
      [{ type: 'function', function: { name: 'get_weather' } }, 4],
    ] as const) {
      const r = await engine.chat.completions.create({
        messages: [{ role: 'user', content: 'Once upon a time' }],
        tools: [WEATHER, TIME],
        tool_choice: choice,
        parallel_tool_calls: false,
        temperature: 1,
        seed,
        max_tokens: 200,
      });
      expect(r.choices[0].finish_reason, JSON.stringify(r.choices[0])).toBe('tool_calls');
      const calls = r.choices[0].message.tool_calls!;
      expect(calls).toHaveLength(1);
      const c = calls[0];
      if (typeof choice === 'object') expect(c.function.name).toBe(choice.function.name);
      const args = JSON.parse(c.function.arguments) as Record<string, unknown>;
      if (c.function.name === 'get_time') expect(['UTC', 'CET']).toContain(args.zone);
      else {
        expect(typeof args.city).toBe('string');
        expect(Number.isInteger(args.days) && (args.days as number) >= 1 && (args.days as number) <= 7).toBe(true);
      }
    }
  });
});
