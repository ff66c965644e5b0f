/**
 * Reasoning output: the format is detected from the template (think tags, Magistral [THINK], harmony channels),
 * the splitter sends reasoning to `reasoning_content` and the rest to `content` whatever the delta boundaries, and
 * the engine returns it so (whole and streamed) with a thinking template, including a prompt that opens the
 * reasoning itself (DeepSeek-R1 style); `reasoning_effort` reaches the template.
 */
import { describe, expect, it } from 'vitest';
import { createChatFormatter } from '../../../src/api/chat-formatter.js';
import { createEngineFromParts, type LocalEngine } from '../../../src/api/local-engine.js';
import type { ChatCompletionChunk } from '../../../src/api/types.js';
import { detectReasoningFormat, startsInsideReasoning } from '../../../src/output/reasoning-format.js';
import { ReasoningSplitter, type splitReasoning } from '../../../src/output/reasoning-splitter.js';
import { isLlmError } from '../../../src/errors.js';
import { createFakeTokenizer, createFakeTransformer, spellAfterPrompt } from '../engine/fake-model.js';

const TAGS = { kind: 'tags', open: '<think>', close: '</think>' } as const;

function splitInPieces(format: Parameters<typeof splitReasoning>[0], text: string, size: number, inside = false) {
  const s = new ReasoningSplitter(format, inside);
  let reasoning = '';
  let content = '';
  for (let i = 0; i < text.length; i += size) {
    const r = s.push(text.slice(i, i + size));
    reasoning += r.reasoning;
    content += r.content;
  }
  const f = s.flush();
  return { reasoning: reasoning + f.reasoning, content: content + f.content };
}

describe('reasoning splitter', () => {
  it('think tags, at every delta size', () => {
    for (const size of [1, 2, 3, 7, 100]) {
      expect(splitInPieces(TAGS, '<think>\nLet me see.\n</think>\n\nThe answer is 4.', size)).toEqual({
        reasoning: '\nLet me see.\n',
        content: 'The answer is 4.',
      });
      expect(splitInPieces(TAGS, '  \n<think>a<b</think>c', size)).toEqual({ reasoning: 'a<b', content: 'c' });
      expect(splitInPieces(TAGS, 'No thinking <think> here', size)).toEqual({
        reasoning: '',
        content: 'No thinking <think> here',
      });
      expect(splitInPieces(TAGS, 'still thinking', size, true)).toEqual({ reasoning: 'still thinking', content: '' });
      expect(splitInPieces(TAGS, 'forced</think>done', size, true)).toEqual({ reasoning: 'forced', content: 'done' });
      expect(splitInPieces(TAGS, '<think>cut off', size)).toEqual({ reasoning: 'cut off', content: '' });
      expect(splitInPieces(TAGS, '<thin', size)).toEqual({ reasoning: '', content: '<thin' });
    }
  });

  it('harmony channels (gpt-oss)', () => {
    const out = '<|channel|>analysis<|message|>User asks 2+2.<|end|><|start|>assistant<|channel|>final<|message|>4';
    for (const size of [1, 4, 1000])
      expect(splitInPieces({ kind: 'harmony' }, out, size)).toEqual({ reasoning: 'User asks 2+2.', content: '4' });
  });

  it('detects the format from the template', () => {
    expect(detectReasoningFormat('{{ "<|channel|>" }}', true)).toEqual({ kind: 'harmony' });
    expect(detectReasoningFormat('{% if x %}<think>\n\n</think>{% endif %}', true)).toEqual(TAGS);
    expect(detectReasoningFormat('[THINK]{{ m.reasoning_content }}[/THINK]', true)).toMatchObject({
      open: '[THINK]',
      close: '[/THINK]',
    });
    expect(detectReasoningFormat('{{ messages }}', false)).toEqual({ kind: 'none' });
    expect(startsInsideReasoning(TAGS, '<|im_start|>assistant\n<think>\n')).toBe(true);
    expect(startsInsideReasoning(TAGS, '<|im_start|>assistant\n<think>\n\n</think>\n\n')).toBe(false);
  });
});

// A Qwen3-like template (thinking on by default; enable_thinking: false closes an empty block) and a DeepSeek-R1 one.
const QWEN3 =
  '{%- for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{%- endfor %}' +
  '{%- if add_generation_prompt %}<|im_start|>assistant\n{%- if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>\n\n{%- endif %}' +
  '{%- if reasoning_effort is defined %}[effort={{ reasoning_effort }}]{%- endif %}{%- endif %}';
const R1 =
  '{%- for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{%- endfor %}{%- if add_generation_prompt %}<|im_start|>assistant\n<think>\n{%- endif %}';

async function engineWith(template: string, output: string) {
  const tokenizer = createFakeTokenizer();
  const transformer = createFakeTransformer({ script: spellAfterPrompt(output) });
  return (await createEngineFromParts({
    transformer,
    tokenizer,
    chat: createChatFormatter(tokenizer, { template }),
    modelIdentity: 'fake:think',
    backend: { name: 'fake', description: 'fake', reason: 'requested' },
    contextLength: 256,
    slots: 1,
  })) as LocalEngine;
}

describe('reasoning through the engine', () => {
  const messages = [{ role: 'user' as const, content: '2+2?' }];

  it('a thinking template: reasoning_content apart from content, whole and streamed', async () => {
    const engine = await engineWith(QWEN3, '<think>\nadd them\n</think>\n\nIt is 4.');
    const r = await engine.chat.completions.create({ messages, temperature: 0 });
    expect(r.choices[0].message).toEqual({ role: 'assistant', content: 'It is 4.', reasoning_content: '\nadd them\n' });
    const s = await engine.chat.completions.create({ messages, temperature: 0, stream: true });
    const chunks: ChatCompletionChunk[] = [];
    for await (const c of s) chunks.push(c);
    const join = (k: 'content' | 'reasoning_content') => chunks.map((c) => c.choices[0].delta[k] ?? '').join('');
    expect(join('content')).toBe('It is 4.');
    expect(join('reasoning_content')).toBe('\nadd them\n');
    expect(chunks.some((c) => (c.choices[0].delta.content ?? '').includes('think'))).toBe(false);
  });

  it('a prompt that opens the reasoning (R1 distills): everything before </think> is reasoning', async () => {
    const engine = await engineWith(R1, 'hmm</think>\n\nFour.');
    const r = await engine.chat.completions.create({ messages, temperature: 0 });
    expect(r.choices[0].message).toEqual({ role: 'assistant', content: 'Four.', reasoning_content: 'hmm' });
  });

  it('harmony (gpt-oss-like template): analysis → reasoning_content, final → content; <|end|> does not stop', async () => {
    const HARMONY =
      '{%- for m in messages %}<|start|>{{ m.role }}<|message|>{{ m.content }}<|end|>{%- endfor %}' +
      '{%- if add_generation_prompt %}<|start|>assistant{%- endif %}{# <|channel|> #}';
    const engine = await engineWith(
      HARMONY,
      '<|channel|>analysis<|message|>Simple sum.<|end|><|start|>assistant<|channel|>final<|message|>4',
    );
    const r = await engine.chat.completions.create({ messages, temperature: 0 });
    expect(r.choices[0].message).toEqual({ role: 'assistant', content: '4', reasoning_content: 'Simple sum.' });
  });

  it('a model without reasoning: no reasoning_content', async () => {
    const engine = await engineWith(
      '{%- for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{%- endfor %}{%- if add_generation_prompt %}<|im_start|>assistant\n{%- endif %}',
      '<think>x</think>y',
    );
    const r = await engine.chat.completions.create({ messages, temperature: 0 });
    expect(r.choices[0].message).toEqual({ role: 'assistant', content: '<think>x</think>y' });
  });

  it('reasoning_effort and enable_thinking: false reach the template; bad effort is refused', async () => {
    const engine = await engineWith(QWEN3, 'ok');
    const r = await engine.chat.completions.create({
      messages,
      temperature: 0,
      reasoning_effort: 'high',
      chat_template_kwargs: { enable_thinking: false },
    });
    expect(r.choices[0].message.content).toBe('ok');
    expect(r.usage.prompt_tokens).toBeGreaterThan(
      (await engine.chat.completions.create({ messages, temperature: 0 })).usage.prompt_tokens + 'effort=high'.length,
    );
    const e = await engine.chat.completions
      .create({ messages, reasoning_effort: 'max' as never })
      .catch((x: unknown) => x);
    expect(isLlmError(e, 'invalid-request') && e.details?.field).toBe('reasoning_effort');
  });

  it('assistant messages with tool_calls / null content and tool results are accepted; bad ones named', async () => {
    const engine = await engineWith(QWEN3, 'done');
    const conv = [
      { role: 'user' as const, content: [{ type: 'text' as const, text: 'weather?' }] },
      {
        role: 'assistant' as const,
        content: null,
        tool_calls: [{ id: 'c1', type: 'function' as const, function: { name: 'get', arguments: '{}' } }],
      },
      { role: 'tool' as const, content: 'sunny', tool_call_id: 'c1' },
    ];
    const r = await engine.chat.completions.create({ messages: conv, temperature: 0 });
    expect(r.choices[0].message.content).toBe('done');
    const bad = await engine.chat.completions
      .create({ messages: [{ role: 'user', content: null }] } as never)
      .catch((x: unknown) => x);
    expect(isLlmError(bad, 'invalid-request') && bad.details?.field).toBe('messages[0].content');
    const badCall = await engine.chat.completions
      .create({ messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 1 }] }] } as never)
      .catch((x: unknown) => x);
    expect(isLlmError(badCall, 'invalid-request') && badCall.details?.field).toBe('messages[0].tool_calls[0]');
  });
});
