/**
 * Chat templates of OLMo 2, EXAONE 4, ERNIE 4.5 and Hunyuan (dense) — absent from llama.cpp's template corpus —
 * render through our Jinja engine as the templates define. The templates are the models' own (test/unit/chat/templates:
 * OLMo 2 Instruct's tokenizer_config chat_template, the same text as Tülu 3's with a leading bos_token; EXAONE 4.0's
 * chat_template.jinja; ERNIE 4.5's DEFAULT_CHAT_TEMPLATE of transformers' Ernie4_5 tokenizer; tencent/Hunyuan-4B-Instruct's
 * chat_template.jinja, 654 bytes); the expected strings follow from each template's text.
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type ChatMessage, compileTemplate, renderChat, templateSupportsThinking } from '../../../src/chat/index.js';

const load = (name: string) => readFileSync(new URL(`./templates/${name}.jinja`, import.meta.url), 'utf8');
const OLMO2 = load('allenai-OLMo-2-Instruct');
const EXAONE4 = load('LGAI-EXAONE-EXAONE-4.0-1.2B');
const ERNIE45 = load('baidu-ERNIE-4.5-0.3B-PT');
const HUNYUAN = load('tencent-Hunyuan-4B-Instruct');

const CHAT: ChatMessage[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Hello!' },
  { role: 'assistant', content: 'Hi there.' },
  { role: 'user', content: 'Tell me a story.' },
];
type Opts = Parameters<typeof renderChat>[1];
const render = (template: string, messages: ChatMessage[] = CHAT, opts: Opts = {}) =>
  renderChat(messages, { template, ...opts }).prompt;

describe('OLMo 2 chat template', () => {
  const eot = { bosToken: '<|endoftext|>', eosToken: '<|endoftext|>' };
  it('writes <|system|>, <|user|>, <|assistant|> turns, ends earlier answers with EOS and a newline', () => {
    expect(render(OLMO2, CHAT, eot)).toBe(
      '<|endoftext|><|system|>\nBe brief.\n<|user|>\nHello!\n<|assistant|>\nHi there.<|endoftext|>\n' +
        '<|user|>\nTell me a story.\n<|assistant|>\n',
    );
  });

  it('without a generation prompt the last user turn ends the text; a final answer has no newline after EOS', () => {
    expect(render(OLMO2, CHAT, { ...eot, addGenerationPrompt: false }).endsWith('Tell me a story.\n')).toBe(true);
    const done = render(OLMO2, CHAT.slice(1, 3), { ...eot, addGenerationPrompt: false, continueFinalMessage: false });
    expect(done).toBe('<|endoftext|><|user|>\nHello!\n<|assistant|>\nHi there.<|endoftext|>');
  });
});

describe('EXAONE 4 chat template', () => {
  it('keeps the system turn (written before the template’s `continue`) and closes the thought when thinking is off', () => {
    expect(render(EXAONE4, CHAT, { chatTemplateKwargs: { enable_thinking: false } })).toBe(
      '[|system|]\nBe brief.[|endofturn|]\n[|user|]\nHello![|endofturn|]\n' +
        '[|assistant|]\n<think>\n\n</think>\n\nHi there.[|endofturn|]\n' +
        '[|user|]\nTell me a story.[|endofturn|]\n[|assistant|]\n<think>\n\n</think>\n\n',
    );
  });

  it('enable_thinking opens the thought; it is the default (a thinking template)', () => {
    const on = render(EXAONE4, CHAT.slice(1, 2), { chatTemplateKwargs: { enable_thinking: true } });
    expect(on).toBe('[|user|]\nHello![|endofturn|]\n[|assistant|]\n<think>\n');
    expect(templateSupportsThinking(compileTemplate(EXAONE4))).toBe(true);
    expect(render(EXAONE4, CHAT.slice(1, 2))).toBe(on);
  });

  it('drops earlier reasoning from the history', () => {
    const text = render(
      EXAONE4,
      [
        { role: 'user', content: 'Q1' },
        { role: 'assistant', content: '<think>\nR1-hidden\n</think>\n\nA1' },
        { role: 'user', content: 'Q2' },
      ],
      { chatTemplateKwargs: { enable_thinking: false } },
    );
    expect(text).not.toContain('R1-hidden');
    expect(text).toContain('[|assistant|]\n<think>\n\n</think>\n\nA1[|endofturn|]\n[|user|]\nQ2');
  });

  it('declares tools in a system turn and renders tool calls and results as JSON', () => {
    const tools = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Weather',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      },
    ];
    const text = render(
      EXAONE4,
      [
        { role: 'user', content: 'Weather in Seoul?' },
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Seoul"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: '20 C' },
      ] as ChatMessage[],
      { tools, chatTemplateKwargs: { enable_thinking: false } },
    );
    expect(text.startsWith('[|system|]\n# Available Tools\nYou can use none, one, or multiple')).toBe(true);
    expect(text).toContain(
      '<tool>{"type": "function", "function": {"name": "get_weather", "description": "Weather", "parameters": ' +
        '{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}</tool>\n',
    );
    expect(text).toContain(
      '[|user|]\nWeather in Seoul?[|endofturn|]\n[|assistant|]\n<think>\n\n</think>\n\n' +
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Seoul"}}</tool_call>[|endofturn|]\n' +
        '[|tool|]\n<tool_result>{"result": "20 C"}</tool_result>[|endofturn|]\n[|assistant|]\n<think>\n\n</think>\n\n',
    );
  });
});

describe('ERNIE 4.5 chat template', () => {
  it('writes the system text, "User: " / "Assistant: " turns and <|end_of_sentence|> after answers', () => {
    expect(render(ERNIE45)).toBe(
      '<|begin_of_sentence|>Be brief.\nUser: Hello!\nAssistant: Hi there.<|end_of_sentence|>' +
        'User: Tell me a story.\nAssistant: ',
    );
  });

  it('opens the answer even without a generation prompt: llama.cpp defines add_generation_prompt only when true', () => {
    expect(render(ERNIE45, CHAT, { addGenerationPrompt: false })).toBe(render(ERNIE45));
  });
});

describe('Hunyuan (dense) chat template', () => {
  it('writes BOS, the system text before <｜hy_place▁holder▁no▁3｜> and the hy_User / hy_Assistant turns', () => {
    expect(render(HUNYUAN)).toBe(
      '<｜hy_begin▁of▁sentence｜>Be brief.<｜hy_place▁holder▁no▁3｜><｜hy_User｜>Hello!<｜hy_Assistant｜>Hi there.' +
        '<｜hy_place▁holder▁no▁2｜><｜hy_User｜>Tell me a story.<｜hy_Assistant｜>',
    );
  });

  it('without a system message starts at the user turn; without a generation prompt ends with no▁8', () => {
    const text = render(HUNYUAN, CHAT.slice(1, 2), { addGenerationPrompt: false });
    expect(text).toBe('<｜hy_begin▁of▁sentence｜><｜hy_User｜>Hello!<｜hy_place▁holder▁no▁8｜>');
  });
});
