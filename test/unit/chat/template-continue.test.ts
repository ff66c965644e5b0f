/**
 * A conversation ending with an assistant message continues it, as llama-server does by default
 * (`--prefill-assistant`); the corpus suite checks the same against llama.cpp for every template.
 */

import { describe, expect, it } from 'vitest';
import { renderChat, type ChatMessage } from '../../../src/chat/index.js';
import { thrownLlmError } from '../../helpers/llm-error.js';

const QWEN3_LIKE =
  "{% for m in messages %}<|im_start|>{{ m.role }}\n{% if m.role == 'assistant' and m.reasoning_content %}<think>\n{{ m.reasoning_content }}\n</think>\n\n{% endif %}{{ m.content }}<|im_end|>\n{% endfor %}" +
  '{% if add_generation_prompt %}<|im_start|>assistant\n{% if not enable_thinking %}<think>\n\n</think>\n\n{% endif %}{% endif %}';

describe('continuing a trailing assistant message', () => {
  const head: ChatMessage[] = [{ role: 'user', content: 'Write a haiku.' }];

  it('ChatML: the assistant turn is opened once and the text continues', () => {
    expect(renderChat([...head, { role: 'assistant', content: 'Autumn moon' }]).prompt).toBe(
      '<|im_start|>user\nWrite a haiku.<|im_end|>\n<|im_start|>assistant\nAutumn moon',
    );
    // opting out renders it as a finished turn followed by a new generation prompt
    expect(
      renderChat([...head, { role: 'assistant', content: 'Autumn moon' }], { continueFinalMessage: false }).prompt,
    ).toBe(
      '<|im_start|>user\nWrite a haiku.<|im_end|>\n<|im_start|>assistant\nAutumn moon<|im_end|>\n<|im_start|>assistant\n',
    );
  });

  it('a reasoning template gets its markers around the reasoning, closed when content follows', () => {
    expect(
      renderChat([...head, { role: 'assistant', content: 'Autumn moon' }], { template: QWEN3_LIKE }).prompt.endsWith(
        '<|im_start|>assistant\n<think>\n\n</think>\n\nAutumn moon',
      ),
    ).toBe(true);
    expect(
      renderChat([...head, { role: 'assistant', content: '', reasoning_content: 'Hmm' }], {
        template: QWEN3_LIKE,
      }).prompt.endsWith('<|im_start|>assistant\n<think>\nHmm'),
    ).toBe(true);
  });

  it('two trailing assistant messages or a trailing tool call are invalid-request', () => {
    expect(
      thrownLlmError(() =>
        renderChat([...head, { role: 'assistant', content: 'a' }, { role: 'assistant', content: 'b' }]),
      ).code,
    ).toBe('invalid-request');
    const call = { id: 'c1', type: 'function' as const, function: { name: 'f', arguments: '{}' } };
    expect(
      thrownLlmError(() => renderChat([...head, { role: 'assistant', content: null, tool_calls: [call] }])).message,
    ).toMatch(/tool calls, which cannot be continued/);
  });
});
