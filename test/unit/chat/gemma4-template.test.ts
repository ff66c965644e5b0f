/**
 * Gemma 4's chat template (llama.cpp's copy of google/gemma-4-31B-it's, in the template corpus) renders through our
 * Jinja engine with its thinking switch: `chat_template_kwargs.enable_thinking` puts `<|think|>` in the system turn
 * and leaves the model's thought channel open; with it false the generation prompt closes an empty thought channel (absent, it is on, as in llama.cpp).
 * Prior reasoning is dropped from history; the template is detected as thinking-capable.
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compileTemplate, renderChat, templateSupportsThinking } from '../../../src/chat/index.js';

const template = readFileSync(
  new URL('../../fixtures/templates/corpus/google-gemma-4-31B-it.jinja', import.meta.url),
  'utf8',
);
const render = (kwargs: Record<string, unknown>, messages = [{ role: 'user' as const, content: 'Hi' }]) =>
  renderChat(messages, { template, chatTemplateKwargs: kwargs, bosToken: '<bos>', now: new Date(2026, 0, 1) }).prompt;

describe('gemma4 chat template', () => {
  it('enable_thinking: true opens the system turn with <|think|> and leaves the thought channel to the model', () => {
    const on = render({ enable_thinking: true });
    expect(on).toBe('<bos><|turn>system\n<|think|>\n<turn|>\n<|turn>user\nHi<turn|>\n<|turn>model\n');
  });

  it('enable_thinking: false closes an empty thought channel after the generation prompt', () => {
    const off = render({ enable_thinking: false });
    expect(off).toBe('<bos><|turn>user\nHi<turn|>\n<|turn>model\n<|channel>thought\n<channel|>');
    expect(render({})).toBe(render({ enable_thinking: true })); // llama.cpp's default: thinking on
  });

  it('drops earlier reasoning from the history and keeps the system prompt', () => {
    const text = render({ enable_thinking: true }, [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Q1' },
      { role: 'assistant', content: 'A1', reasoning_content: 'R1-hidden' },
      { role: 'user', content: 'Q2' },
    ] as never);
    expect(text).toContain('<|think|>');
    expect(text).not.toContain('R1-hidden');
    expect(text).toContain('Be brief.');
    expect(text).toContain('<|turn>model\nA1<turn|>');
    expect(text.endsWith('<|turn>user\nQ2<turn|>\n<|turn>model\n')).toBe(true);
  });

  it('is detected as a template with a thinking switch', () => {
    expect(templateSupportsThinking(compileTemplate(template))).toBe(true);
  });
});
