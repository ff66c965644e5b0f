/**
 * Gemma 1's chat template (google/gemma-7b-it, the copy in llama.cpp's tests/test-chat-template.cpp) renders through
 * our Jinja engine exactly as llama.cpp's Jinja path does on its test conversation: no system role (the system prompt
 * joins the first user turn), assistant turns as `model`, contents trimmed, the `<start_of_turn>model` prompt. The
 * expected text is llama.cpp's `expected_output_jinja` for that case. (OLMo 2, EXAONE 4, ERNIE 4.5 and Hunyuan have no
 * template in the llama.cpp snapshot — neither models/templates nor its tests — so none is tested here.)
 */

import { describe, expect, it } from 'vitest';
import { compileTemplate, renderChat, templateCaps } from '../../../src/chat/index.js';

const TEMPLATE =
  "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\\n'}}{% endif %}";

/** llama.cpp's test conversation (tests/test-chat-template.cpp). */
const CONVERSATION = [
  { role: 'system', content: 'You are a helpful assistant' },
  { role: 'user', content: 'Hello' },
  { role: 'assistant', content: 'Hi there' },
  { role: 'user', content: 'Who are you' },
  { role: 'assistant', content: '   I am an assistant   ' },
  { role: 'user', content: 'Another question' },
] as const;

describe('gemma (Gemma 1) chat template', () => {
  it("renders llama.cpp's test conversation as its Jinja path does", () => {
    const { prompt } = renderChat(CONVERSATION as never, { template: TEMPLATE, bosToken: '', eosToken: '' });
    expect(prompt).toBe(
      '<start_of_turn>user\nYou are a helpful assistant\nHello<end_of_turn>\n<start_of_turn>model\nHi there<end_of_turn>\n<start_of_turn>user\nWho are you<end_of_turn>\n<start_of_turn>model\nI am an assistant<end_of_turn>\n<start_of_turn>user\nAnother question<end_of_turn>\n<start_of_turn>model\n',
    );
  });

  it('has no system role; a lone user turn renders trimmed, then the model prompt', () => {
    expect(templateCaps(compileTemplate(TEMPLATE)).supportsSystemRole).toBe(false);
    const { prompt } = renderChat([{ role: 'user', content: ' Hi ' }] as never, { template: TEMPLATE });
    expect(prompt).toBe('<start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n');
  });
});
