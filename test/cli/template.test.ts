/**
 * `webgguf template` with the OpenAI request shape: tools, assistant tool_calls, tool results and
 * chat_template_kwargs rendered as the engine renders them; the printed prompt is the tokenised text.
 */

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliCaptured as cli } from '../helpers/run-cli.js';
import { sharedPath } from '../helpers/shared-path.js';

const QWEN3 = sharedPath('models', 'arch', 'qwen3-f16.gguf');
const LLAMA3 = sharedPath('models', 'arch', 'llama3-f16.gguf');
const dir = mkdtempSync(join(tmpdir(), 'webgguf-template-'));
const file = (name: string, doc: unknown): string => {
  const p = join(dir, name);
  writeFileSync(p, JSON.stringify(doc));
  return p;
};

const tools = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Weather of a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } } },
    },
  },
];
const request = {
  messages: [
    { role: 'user', content: 'Weather in Paris?' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } }],
    },
    { role: 'tool', tool_call_id: 'c1', content: '21C, sunny' },
  ],
  tools,
  chat_template_kwargs: { enable_thinking: false },
};

describe('webgguf template', () => {
  it('renders tools, tool calls, tool results and chat_template_kwargs from the OpenAI request shape', async () => {
    const r = await cli('template', QWEN3, '--messages', file('req.json', request), '--json');
    expect(r.code, r.err).toBe(0);
    const doc = JSON.parse(r.out) as { prompt: string; tokens: number[]; caps: { supportsTools: boolean } };
    expect(doc.caps.supportsTools).toBe(true);
    expect(doc.prompt).toContain('"name": "get_weather"');
    expect(doc.prompt).toContain('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>');
    expect(doc.prompt).toContain('<tool_response>\n21C, sunny\n</tool_response>');
    expect(doc.prompt.endsWith('<|im_start|>assistant\n<think>\n\n</think>\n\n')).toBe(true);
    // thinking on (the default for a reasoning template): no empty think block
    const on = await cli(
      'template',
      QWEN3,
      '--messages',
      file('req-on.json', { ...request, chat_template_kwargs: {} }),
      '--json',
    );
    expect((JSON.parse(on.out) as { prompt: string }).prompt.endsWith('<|im_start|>assistant\n')).toBe(true);
    // --kwargs overrides the file
    const off = await cli(
      'template',
      QWEN3,
      '--messages',
      file('req-on2.json', { ...request, chat_template_kwargs: {} }),
      '--kwargs',
      '{"enable_thinking": false}',
      '--json',
    );
    expect((JSON.parse(off.out) as { prompt: string }).prompt).toBe(doc.prompt);
  });

  it('accepts a bare messages array; prints the tokenised text (BOS added as a token, not as text)', async () => {
    const bare = file('bare.json', [{ role: 'user', content: 'Hi' }]);
    const r = await cli('template', LLAMA3, '--messages', bare, '--json');
    expect(r.code, r.err).toBe(0);
    const doc = JSON.parse(r.out) as { prompt: string; tokens: number[] };
    expect(doc.prompt.startsWith('<|start_header_id|>')).toBe(true);
    expect(doc.tokens[0]).toBe(2000); // <|begin_of_text|> of this fixture's vocab
    expect(doc.tokens.filter((t) => t === 2000)).toHaveLength(1);
    const raw = await cli('template', LLAMA3, '--messages', bare, '--json', '--raw');
    const rawDoc = JSON.parse(raw.out) as { prompt: string; tokens: number[] };
    expect(rawDoc.prompt).toBe(`<|begin_of_text|>${doc.prompt}`);
    expect(rawDoc.tokens).toEqual(doc.tokens);
  });

  it('bad input is invalid-request naming the field', async () => {
    const r = await cli(
      'template',
      QWEN3,
      '--messages',
      file('bad.json', { messages: [{ role: 'user', content: 'x' }], chat_template_kwargs: { enable_thinking: 1 } }),
    );
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/enable_thinking must be a boolean/);
    const k = await cli(
      'template',
      QWEN3,
      '--messages',
      file('ok.json', [{ role: 'user', content: 'x' }]),
      '--kwargs',
      'nope',
    );
    expect(k.err).toMatch(/--kwargs must be a JSON object/);
  });
});
