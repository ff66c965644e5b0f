/**
 * Gemma 3n's chat format is Gemma 3's (`<start_of_turn>user|model … <end_of_turn>`, the system prompt joined to the
 * first user turn): the Gemma 3 template renders a Gemma 3n conversation through our Jinja engine, with string
 * content and with the list-of-parts content Gemma 3n clients send, and refuses non-alternating roles.
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type ChatMessage, renderChat } from '../../../src/chat/index.js';
import { thrownLlmError } from '../../helpers/llm-error.js';

const template = readFileSync(new URL('./templates/google-gemma-3-4b-it.jinja', import.meta.url), 'utf8');
const render = (messages: ChatMessage[]) => renderChat(messages, { template, bosToken: '<bos>' }).prompt;

describe('gemma3n chat template (Gemma 3 format)', () => {
  it('joins the system prompt to the first user turn and opens the model turn', () => {
    expect(
      render([
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello!' },
        { role: 'assistant', content: 'Hi there.' },
        { role: 'user', content: 'Tell me a story.' },
      ]),
    ).toBe(
      '<bos><start_of_turn>user\nBe brief.\n\nHello!<end_of_turn>\n<start_of_turn>model\nHi there.<end_of_turn>\n' +
        '<start_of_turn>user\nTell me a story.<end_of_turn>\n<start_of_turn>model\n',
    );
  });

  it('renders list-of-parts content like plain strings', () => {
    const parts = render([
      { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
      { role: 'user', content: [{ type: 'text', text: ' Hello! ' }] },
    ]);
    expect(parts).toBe(
      render([
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello!' },
      ]),
    );
  });

  it('refuses roles that do not alternate', () => {
    const e = thrownLlmError(() =>
      render([
        { role: 'user', content: 'a' },
        { role: 'user', content: 'b' },
      ]),
    );
    expect(e.code).toBe('template');
    expect(e.message).toMatch(/roles must alternate/);
  });
});
