/**
 * A chat template that does not compile is reported when the model loads (engine creation), not on the first
 * message; `templateFallback: 'chatml'` opts into ChatML instead. `chat_template_kwargs` reach the template and are
 * validated per request.
 */

import { describe, expect, it } from 'vitest';
import { createChatFormatter } from '../../../src/api/chat-formatter.js';
import { createEngine } from '../../../src/api/create-engine.js';
import { validateChatTemplateKwargs } from '../../../src/chat/template-kwargs.js';
import { isLlmError } from '../../../src/errors.js';
import { thrownLlmError } from '../../helpers/llm-error.js';
import { sharedPath } from '../../helpers/shared-path.js';
import { loadTokenizer } from '../tokenizer/vocab-fixtures.js';

const MODEL = sharedPath('models', 'stories260K.gguf');
const BROKEN = '{% for m in messages %}{{ m.content }}'; // no endfor

describe('template compiled at load', () => {
  it('a broken template fails createEngine with LlmError(template)', async () => {
    const e = await createEngine({
      model: MODEL,
      backend: 'cpu',
      contextLength: 64,
      warmup: false,
      chatTemplate: BROKEN,
    }).then(
      () => null,
      (err: unknown) => err,
    );
    expect(isLlmError(e, 'template'), String(e)).toBe(true);
    expect((e as Error).message).toMatch(/parsing the chat template failed/);
  });

  it("templateFallback: 'chatml' loads with ChatML and says why", async () => {
    const engine = await createEngine({
      model: MODEL,
      backend: 'cpu',
      contextLength: 128,
      warmup: false,
      chatTemplate: BROKEN,
      templateFallback: 'chatml',
    });
    try {
      expect(engine.info.chatTemplateFallback).toMatch(/does not compile.*ChatML/);
      const r = await engine.chat.completions.create({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 });
      expect(r.choices).toHaveLength(1);
    } finally {
      await engine.unload();
    }
  });

  it('chat_template_kwargs reach the template; bad ones are invalid-request naming the field', async () => {
    const template =
      '{% if enable_thinking %}<think on>{% endif %}{{ greeting }}{% for m in messages %}{{ m.content }}{% endfor %}';
    const engine = await createEngine({
      model: MODEL,
      backend: 'cpu',
      contextLength: 128,
      warmup: false,
      chatTemplate: template,
    });
    try {
      const messages = [{ role: 'user' as const, content: 'hi' }];
      const plain = await engine.chat.completions.create({ messages, max_tokens: 1 });
      const more = await engine.chat.completions.create({
        messages,
        max_tokens: 1,
        chat_template_kwargs: { greeting: 'Once upon a time there was a' },
      });
      expect(more.usage.prompt_tokens).toBeGreaterThan(plain.usage.prompt_tokens);
      const bad = await engine.chat.completions
        .create({ messages, max_tokens: 1, chat_template_kwargs: { enable_thinking: 'yes' } })
        .then(
          () => null,
          (err: unknown) => err,
        );
      expect(isLlmError(bad, 'invalid-request'), String(bad)).toBe(true);
      expect((bad as { details?: { field?: string } }).details?.field).toBe('chat_template_kwargs.enable_thinking');
    } finally {
      await engine.unload();
    }
  });

  it('enable_thinking defaults as llama.cpp (on for a reasoning template) and the kwargs turn it off', async () => {
    const tokenizer = await loadTokenizer(MODEL);
    const template =
      '{% for m in messages %}{{ m.content }}{% endfor %}{% if add_generation_prompt %}{% if enable_thinking %}<think>\n{% else %}<think></think>{% endif %}{% endif %}';
    const fmt = createChatFormatter(tokenizer, { template });
    expect(fmt.build([{ role: 'user', content: 'q' }]).prompt).toBe('q<think>\n');
    expect(
      fmt.build([{ role: 'user', content: 'q' }], undefined, { chatTemplateKwargs: { enable_thinking: false } }).prompt,
    ).toBe('q<think></think>');
  });
});

describe('validateChatTemplateKwargs', () => {
  it('accepts JSON data and rejects everything else with the field named', () => {
    expect(validateChatTemplateKwargs(undefined)).toEqual({});
    expect(
      validateChatTemplateKwargs({ enable_thinking: false, reasoning_effort: 'high', n: [1, { a: null }] }),
    ).toEqual({
      enable_thinking: false,
      reasoning_effort: 'high',
      n: [1, { a: null }],
    });
    const field = (v: unknown): string | undefined =>
      (thrownLlmError(() => validateChatTemplateKwargs(v)).details as { field?: string } | undefined)?.field;
    expect(field([1])).toBe('chat_template_kwargs');
    expect(field({ messages: [] })).toBe('chat_template_kwargs.messages');
    expect(field({ 'a-b': 1 })).toBe('chat_template_kwargs.a-b');
    expect(field({ x: () => 1 })).toBe('chat_template_kwargs.x');
    expect(field({ x: { y: Number.NaN } })).toBe('chat_template_kwargs.x.y');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(field({ c: cyclic })).toBe('chat_template_kwargs.c.self');
  });
});
