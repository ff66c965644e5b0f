/**
 * gpt-oss's harmony chat format: its real template (llama.cpp's copy of openai/gpt-oss-120b's, in the template
 * corpus) renders through our Jinja engine as the model expects — the system message with `reasoning_effort`
 * (default medium), system prompts as developer instructions, tools as a TypeScript-like `functions` namespace,
 * earlier analysis dropped once a final answer follows, an analysis kept before a tool call, tool calls to
 * `functions.*` on the commentary channel and tool results back to the assistant. Then the output side: analysis is
 * reasoning, final the answer, a commentary preamble is answer text and a commentary message to `functions.*` is a
 * tool call, with the recipient in the channel header or in the role header (the order the template itself writes).
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compileTemplate, renderChat, templateSupportsThinking } from '../../../src/chat/index.js';
import { detectReasoningFormat } from '../../../src/output/reasoning-format.js';
import { ReasoningSplitter } from '../../../src/output/reasoning-splitter.js';
import { detectToolCallFormat } from '../../../src/tools/tool-call-format.js';
import { parseToolCalls } from '../../../src/tools/tool-call-parse.js';

const template = readFileSync(
  new URL('../../fixtures/templates/corpus/openai-gpt-oss-120b.jinja', import.meta.url),
  'utf8',
);
const render = (
  messages: readonly Record<string, unknown>[],
  o: { kwargs?: Record<string, unknown>; tools?: unknown[]; addGenerationPrompt?: boolean } = {},
) =>
  renderChat(messages as never, {
    template,
    chatTemplateKwargs: o.kwargs ?? {},
    now: new Date(2026, 0, 1),
    ...(o.tools ? { tools: o.tools } : {}),
    ...(o.addGenerationPrompt === false ? { addGenerationPrompt: false } : {}),
  }).prompt;

const SYSTEM = (effort: string, extra = '') =>
  '<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\nKnowledge cutoff: 2024-06\n' +
  `Current date: 2026-01-01\n\nReasoning: ${effort}\n\n# Valid channels: analysis, commentary, final. ` +
  `Channel must be included for every message.${extra}<|end|>`;

const WEATHER = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

describe('gpt-oss chat template (harmony)', () => {
  it('opens with the system message at reasoning effort medium and ends on the assistant header', () => {
    expect(render([{ role: 'user', content: 'Hi' }])).toBe(
      `${SYSTEM('medium')}<|start|>user<|message|>Hi<|end|><|start|>assistant`,
    );
  });

  it('reasoning_effort sets the effort; a system prompt becomes developer instructions', () => {
    const text = render(
      [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
      { kwargs: { reasoning_effort: 'high' } },
    );
    expect(text).toBe(
      `${SYSTEM('high')}<|start|>developer<|message|># Instructions\n\nBe brief.\n\n<|end|>` +
        '<|start|>user<|message|>Hi<|end|><|start|>assistant',
    );
    expect(render([{ role: 'user', content: 'Hi' }], { kwargs: { reasoning_effort: 'low' } })).toContain(
      'Reasoning: low',
    );
  });

  it('drops the analysis of an answered turn from the history', () => {
    const text = render([
      { role: 'user', content: 'Q1' },
      { role: 'assistant', content: 'A1', reasoning_content: 'R1-hidden' },
      { role: 'user', content: 'Q2' },
    ]);
    expect(text).not.toContain('R1-hidden');
    expect(text).toContain('<|start|>assistant<|channel|>final<|message|>A1<|end|><|start|>user<|message|>Q2<|end|>');
  });

  it('renders tools, a tool call after its analysis, and the tool result', () => {
    const text = render(
      [
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: '',
          reasoning_content: 'Need weather.',
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: '{"temp":20}' },
      ],
      { tools: [WEATHER] },
    );
    expect(text).toBe(
      SYSTEM('medium', "\nCalls to these tools must go to the commentary channel: 'functions'.") +
        '<|start|>developer<|message|># Tools\n\n## functions\n\nnamespace functions {\n\n// Weather\n' +
        'type get_weather = (_: {\ncity: string,\n}) => any;\n\n} // namespace functions<|end|>' +
        '<|start|>user<|message|>Weather in Paris?<|end|>' +
        '<|start|>assistant<|channel|>analysis<|message|>Need weather.<|end|>' +
        '<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Paris"}<|call|>' +
        '<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>"{\\"temp\\":20}"<|end|>' +
        '<|start|>assistant',
    );
  });

  it('keeps the analysis of a final assistant turn being continued', () => {
    const text = render(
      [
        { role: 'user', content: 'Q1' },
        { role: 'assistant', content: 'A1', reasoning_content: 'R1' },
      ],
      { addGenerationPrompt: false },
    );
    expect(
      text.endsWith(
        '<|start|>assistant<|channel|>analysis<|message|>R1<|end|><|start|>assistant<|channel|>final<|message|>A1',
      ),
    ).toBe(true);
  });

  it('is detected as harmony for reasoning and tool calls', () => {
    expect(detectReasoningFormat(template, true)).toEqual({ kind: 'harmony' });
    expect(detectToolCallFormat(template)).toBe('harmony');
    expect(templateSupportsThinking(compileTemplate(template))).toBe(true); // as llama.cpp reports it
  });
});

/** Splits `out` delivered in pieces of `size` characters. */
function split(out: string, size: number): { reasoning: string; content: string } {
  const s = new ReasoningSplitter({ kind: 'harmony' });
  let reasoning = '';
  let content = '';
  for (let i = 0; i < out.length; i += size) {
    const r = s.push(out.slice(i, i + size));
    reasoning += r.reasoning;
    content += r.content;
  }
  const r = s.flush();
  return { reasoning: reasoning + r.reasoning, content: content + r.content };
}

const TOOLS = [{ name: 'get_weather', parameters: { type: 'object' } }];

describe('harmony output channels', () => {
  it('analysis → reasoning, final → content, in any delta size', () => {
    const out = '<|channel|>analysis<|message|>User greets.<|end|><|start|>assistant<|channel|>final<|message|>Hello!';
    for (const size of [1, 3, 7, out.length])
      expect(split(out, size)).toEqual({ reasoning: 'User greets.', content: 'Hello!' });
  });

  it('a commentary preamble is answer text; a commentary call is neither', () => {
    const out =
      '<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary<|message|>Checking.<|end|>' +
      '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>';
    for (const size of [1, 5, out.length])
      expect(split(out, size)).toEqual({ reasoning: 'Need weather.', content: 'Checking.' });
    const parsed = parseToolCalls('harmony', out, TOOLS);
    expect(parsed.calls).toEqual([{ name: 'get_weather', arguments: '{"city":"Paris"}' }]);
  });

  it('a recipient in the role header (as the template writes calls) is a call too, also right after the prompt', () => {
    const later =
      '<|channel|>analysis<|message|>Need weather.<|end|>' +
      '<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{"city":"Paris"}<|call|>';
    const first = ' to=functions.get_weather<|channel|>commentary json<|message|>{"city":"Paris"}<|call|>';
    for (const size of [1, 4, 1000]) {
      expect(split(later, size)).toEqual({ reasoning: 'Need weather.', content: '' });
      expect(split(first, size)).toEqual({ reasoning: '', content: '' });
    }
    for (const out of [later, first])
      expect(parseToolCalls('harmony', out, TOOLS).calls).toEqual([
        { name: 'get_weather', arguments: '{"city":"Paris"}' },
      ]);
  });

  it('plain text without channels stays the answer, also when it starts like a recipient', () => {
    for (const out of ['Hello there', 'to be or not', 'to=do list', ' t']) {
      for (const size of [1, 2, 100]) expect(split(out, size)).toEqual({ reasoning: '', content: out });
    }
  });
});
