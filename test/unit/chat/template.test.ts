/**
 * `renderChat`: template selection (model, named, explicit, ChatML fallback), validation errors, the template's own
 * `raise_exception`, `strftime_now`, identity hash, stop strings; and round trips of the public Mistral, Gemma 3 and DeepSeek
 * templates (test data in ./templates) over real vocabularies extended with those families' control tokens.
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CHATML_TEMPLATE, renderChat, sha256Hex, type ChatMessage } from '../../../src/chat/index.js';
import type { GgufValue } from '../../../src/gguf/types.js';
import { createTokenizer } from '../../../src/tokenizer/index.js';
import { thrownLlmError } from '../../helpers/llm-error.js';
import { sharedPath } from '../../helpers/shared-path.js';
import { loadMetadata } from '../tokenizer/vocab-fixtures.js';

const HELLO: ChatMessage[] = [
  { role: 'user', content: 'Hello!' },
  { role: 'assistant', content: 'Hi there.' },
  { role: 'user', content: 'Tell me a story.' },
];

function template(name: string): string {
  return readFileSync(new URL(`./templates/${name}`, import.meta.url), 'utf8');
}

/** A real vocabulary with extra CONTROL tokens appended (what a family's GGUF has for its chat markers). */
function withControlTokens(
  meta: Readonly<Record<string, GgufValue>>,
  extra: string[],
  overrides: Record<string, GgufValue> = {},
) {
  const tokens = meta['tokenizer.ggml.tokens'] as string[];
  const types = (meta['tokenizer.ggml.token_type'] as number[] | undefined) ?? tokens.map(() => 1);
  const out: Record<string, GgufValue> = { ...meta, ...overrides };
  out['tokenizer.ggml.tokens'] = [...tokens, ...extra];
  out['tokenizer.ggml.token_type'] = [...types, ...extra.map(() => 3)];
  const scores = meta['tokenizer.ggml.scores'] as number[] | undefined;
  if (scores) out['tokenizer.ggml.scores'] = [...scores, ...extra.map(() => 0)];
  return out;
}

function expectLlmError(fn: () => unknown, code: 'invalid-request' | 'template', pattern: RegExp): void {
  const e = thrownLlmError(fn);
  expect(e.code, e.message).toBe(code);
  expect(e.message).toMatch(pattern);
}

describe('renderChat', () => {
  it('falls back to ChatML without a template', () => {
    const r = renderChat(HELLO, { metadata: {} });
    expect(r.templateSource).toBe('chatml-fallback');
    expect(r.prompt).toBe(
      '<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\nHi there.<|im_end|>\n<|im_start|>user\nTell me a story.<|im_end|>\n<|im_start|>assistant\n',
    );
    expect(r.templateHash).toBe(sha256Hex(CHATML_TEMPLATE));
    expect(r.stopStrings).toContain('<|im_end|>');
  });

  it('omits the generation prompt on request', () => {
    expect(renderChat([{ role: 'user', content: 'x' }], { addGenerationPrompt: false }).prompt).toBe(
      '<|im_start|>user\nx<|im_end|>\n',
    );
  });

  it('uses named and explicit templates', () => {
    const metadata = {
      'tokenizer.chat_template': 'A{{ messages[0].content }}',
      'tokenizer.chat_template.tool_use': 'T{{ tools|length }}',
    };
    expect(renderChat(HELLO, { metadata }).prompt).toBe('AHello!');
    const named = renderChat(HELLO, {
      metadata,
      templateName: 'tool_use',
      tools: [{ type: 'function', function: { name: 'f' } }],
    });
    expect(named.prompt).toBe('T1');
    expect(named.templateSource).toBe('named');
    expect(renderChat(HELLO, { metadata, template: 'E' }).templateSource).toBe('explicit');
    expectLlmError(
      () => renderChat(HELLO, { metadata, templateName: 'rag' }),
      'template',
      /no chat template named 'rag'/,
    );
  });

  it('rejects bad conversations before rendering', () => {
    expectLlmError(() => renderChat([]), 'invalid-request', /empty/);
    expectLlmError(
      () => renderChat([{ role: 'wizard', content: 'x' } as unknown as ChatMessage]),
      'invalid-request',
      /unknown role "wizard"/,
    );
    expectLlmError(
      () => renderChat([{ role: 'user', content: 42 } as unknown as ChatMessage]),
      'invalid-request',
      /number content/,
    );
    expectLlmError(() => renderChat([{ role: 'user', content: null }]), 'invalid-request', /null content/);
    expectLlmError(
      () =>
        renderChat([
          { role: 'user', content: 'q' },
          { role: 'tool', content: '1', tool_call_id: 'a' },
        ]),
      'invalid-request',
      /no assistant tool call/,
    );
    const call = { id: 'call_1', type: 'function' as const, function: { name: 'f', arguments: '{}' } };
    const msgs: ChatMessage[] = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', content: '1', tool_call_id: 'call_2' },
    ];
    expectLlmError(() => renderChat(msgs), 'invalid-request', /call_2/);
    expect(
      renderChat([...msgs.slice(0, 2), { role: 'tool', content: '1', tool_call_id: 'call_1' }], { template: 'ok' })
        .prompt,
    ).toBe('ok');
  });

  it("turns the template's raise_exception and syntax errors into LlmError('template')", () => {
    const strict = "{% if messages|length > 2 %}{{ raise_exception('Too many messages') }}{% endif %}";
    expectLlmError(
      () => renderChat([{ role: 'system', content: 's' }, ...HELLO], { template: strict }),
      'template',
      /Too many messages/,
    );
    // a template that refuses the system role gets it folded into the first user message, as llama.cpp does
    const gemma =
      "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for m in messages %}{{ m.role }}:{{ m.content }}|{% endfor %}";
    expect(renderChat([{ role: 'system', content: 's' }, ...HELLO], { template: gemma }).prompt).toBe(
      'user:s\nHello!|assistant:Hi there.|user:Tell me a story.|',
    );
    expectLlmError(() => renderChat(HELLO, { template: '{% for %}' }), 'template', /parsing the chat template/);
  });

  it('provides strftime_now from the given clock', () => {
    const r = renderChat(HELLO, {
      template: '{{ strftime_now("%d %b %Y") }}|{{ strftime_now("%Y-%m-%d") }}',
      now: new Date(2024, 6, 26, 12),
    });
    expect(r.prompt).toBe('26 Jul 2024|2024-07-26');
  });

  it('hashes with SHA-256', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('a'.repeat(1000))).toBe('41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3');
  });
});

describe('public templates round-trip through a tokenizer', () => {
  it('Mistral Small 3.1: markers become single control tokens, text comes back', async () => {
    const markers = [
      '[INST]',
      '[/INST]',
      '[SYSTEM_PROMPT]',
      '[/SYSTEM_PROMPT]',
      '[TOOL_CALLS]',
      '[AVAILABLE_TOOLS]',
      '[/AVAILABLE_TOOLS]',
      '[TOOL_RESULTS]',
      '[/TOOL_RESULTS]',
    ];
    const base = await loadMetadata(sharedPath('tokenizer-vectors', 'ggml-vocab-llama-spm.gguf'));
    const tok = createTokenizer(withControlTokens(base, markers, { 'tokenizer.ggml.add_space_prefix': false }));
    const r = renderChat([{ role: 'system', content: 'Be brief.' }, ...HELLO], {
      template: template('mistralai-Mistral-Small-3.1-24B-Instruct-2503.jinja'),
      tokenizer: tok,
    });
    // the vocabulary adds BOS itself, so the reported prompt is the tokenised text: without the template's <s>
    expect(r.prompt).toBe(
      '[SYSTEM_PROMPT]Be brief.[/SYSTEM_PROMPT][INST]Hello![/INST]Hi there.</s>[INST]Tell me a story.[/INST]',
    );
    const raw = renderChat([{ role: 'system', content: 'Be brief.' }, ...HELLO], {
      template: template('mistralai-Mistral-Small-3.1-24B-Instruct-2503.jinja'),
      tokenizer: tok,
      stripBos: false,
    });
    expect(raw.prompt).toBe(`<s>${r.prompt}`);
    const ids = tok.encode(raw.prompt, { parseSpecial: true });
    for (const m of ['<s>', '</s>', '[INST]', '[/INST]', '[SYSTEM_PROMPT]', '[/SYSTEM_PROMPT]'])
      expect(ids).toContain(tok.tokenId(m));
    expect(tok.decode(ids, { renderSpecial: true })).toBe(raw.prompt);
    expect(r.stopStrings).toContain('</s>');
    const call = { id: 'abc', type: 'function' as const, function: { name: 'f', arguments: '{}' } };
    expectLlmError(
      () =>
        renderChat(
          [
            { role: 'user', content: 'a' },
            { role: 'assistant', content: null, tool_calls: [call] },
            { role: 'tool', content: '1', tool_call_id: 'abc' },
          ],
          {
            template: template('mistralai-Mistral-Small-3.1-24B-Instruct-2503.jinja'),
          },
        ),
      'template',
      /Tool call IDs should be alphanumeric/,
    );
  });

  it('Gemma 3 (its own vocab): system text joins the first user turn; markers are single tokens; text comes back', async () => {
    const meta = await loadMetadata(sharedPath('models', 'arch', 'gemma3-f16.gguf'));
    const tok = createTokenizer(meta);
    const gemma3 = template('google-gemma-3-4b-it.jinja');
    const r = renderChat([{ role: 'system', content: 'Be brief.' }, ...HELLO], {
      template: gemma3,
      tokenizer: tok,
      stripBos: false,
    });
    const bos = tok.tokenText(tok.bosId!); // the fixture's vocab spells BOS its own way
    expect(r.prompt).toBe(
      bos +
        '<start_of_turn>user\nBe brief.\n\nHello!<end_of_turn>\n<start_of_turn>model\nHi there.<end_of_turn>\n' +
        '<start_of_turn>user\nTell me a story.<end_of_turn>\n<start_of_turn>model\n',
    );
    const ids = tok.encode(r.prompt, { parseSpecial: true });
    for (const m of [bos, '<start_of_turn>', '<end_of_turn>']) expect(ids).toContain(tok.tokenId(m));
    expect(ids.filter((id) => id === tok.tokenId('<start_of_turn>'))).toHaveLength(4);
    expect(tok.decode(ids, { renderSpecial: true })).toBe(r.prompt);
    expectLlmError(
      () =>
        renderChat(
          [
            { role: 'assistant', content: 'x' },
            { role: 'user', content: 'y' },
          ],
          { template: gemma3, tokenizer: tok },
        ),
      'template',
      /roles must alternate/,
    );
  });

  it('DeepSeek R1 (Qwen vocab): markers become single control tokens, text comes back', async () => {
    const markers = [
      '<｜begin▁of▁sentence｜>',
      '<｜end▁of▁sentence｜>',
      '<｜User｜>',
      '<｜Assistant｜>',
      '<think>',
      '</think>',
    ];
    const base = await loadMetadata(sharedPath('tokenizer-vectors', 'ggml-vocab-qwen2.gguf'));
    const tok = createTokenizer(withControlTokens(base, markers));
    const r = renderChat([{ role: 'system', content: 'Be brief.' }, ...HELLO], {
      template: template('deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja'),
      tokenizer: tok,
      bosToken: '<｜begin▁of▁sentence｜>',
      eosToken: '<｜end▁of▁sentence｜>',
    });
    expect(r.prompt).toBe(
      '<｜begin▁of▁sentence｜>Be brief.<｜User｜>Hello!<｜Assistant｜>Hi there.<｜end▁of▁sentence｜><｜User｜>Tell me a story.<｜Assistant｜><think>\n',
    );
    const ids = tok.encode(r.prompt, { parseSpecial: true });
    for (const m of markers.slice(0, 5)) expect(ids).toContain(tok.tokenId(m));
    expect(tok.decode(ids, { renderSpecial: true })).toBe(r.prompt);
    expect(tok.eogIds.has(tok.tokenId('<｜end▁of▁sentence｜>')!)).toBe(true);
    expect(r.stopStrings).toContain('<｜end▁of▁sentence｜>');
  });
});
