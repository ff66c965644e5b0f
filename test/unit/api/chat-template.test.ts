/**
 * Chat through a model's own template (qwen2 fixture, ChatML with special tokens; random weights, so only the
 * prompt and the cache are checked): the prompt equals llama.cpp's tokenization of the rendered example, the
 * second turn reuses the first, and an engine with another template never reuses it.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChatFormatter } from '../../../src/api/chat-formatter.js';
import { createEngine } from '../../../src/api/create-engine.js';
import type { Engine } from '../../../src/api/engine.js';
import type { ChatMessage } from '../../../src/api/types.js';
import { parseGguf } from '../../../src/gguf/parse.js';
import { NodeFileSource } from '../../../src/io/node-file-source.js';
import { createTokenizer } from '../../../src/tokenizer/index.js';
import { sharedPath } from '../../helpers/shared-path.js';

const MODEL = sharedPath('models', 'arch', 'qwen2-f16.gguf');
const REF = JSON.parse(readFileSync(sharedPath('models', 'arch', 'qwen2-f16.reference.json'), 'utf8')) as {
  chat_example: { context: { messages: ChatMessage[] }; tokens_parse_special: number[] };
};

describe('chat with the model template (qwen2 fixture)', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({ model: MODEL, backend: 'cpu', contextLength: 256, warmup: false });
  });
  afterAll(() => engine.unload());

  it('builds exactly llama.cpp’s prompt tokens for the reference conversation', async () => {
    const source = await NodeFileSource.open(MODEL);
    const gguf = await parseGguf(source);
    await source.close();
    const fmt = createChatFormatter(createTokenizer(gguf.metadata), { metadata: gguf.metadata });
    expect([...fmt.build(REF.chat_example.context.messages).tokens]).toEqual(REF.chat_example.tokens_parse_special);
    expect(fmt.templateHash).toBe(engine.info.chatTemplateHash);
    expect(fmt.templateHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('the second turn prefills only its new tokens; another template never reuses', async () => {
    const messages = REF.chat_example.context.messages;
    const first = await engine.chat.completions.create({ messages, max_tokens: 3, seed: 1 });
    expect(first.usage.prompt_tokens).toBe(REF.chat_example.tokens_parse_special.length);
    const before = await engine.stats();
    const next: ChatMessage[] = [
      ...messages,
      { role: 'assistant', content: first.choices[0].message.content },
      { role: 'user', content: 'And then?' },
    ];
    const second = await engine.chat.completions.create({ messages: next, max_tokens: 2, seed: 1 });
    const after = await engine.stats();
    const newTokens = second.usage.prompt_tokens - second.usage.prompt_tokens_details.cached_tokens;
    expect(second.usage.prompt_tokens_details.cached_tokens).toBeGreaterThanOrEqual(first.usage.prompt_tokens);
    expect(after.prefillTokens - before.prefillTokens).toBe(newTokens);

    const other = await createEngine({
      model: MODEL,
      backend: 'cpu',
      contextLength: 256,
      warmup: false,
      chatTemplate: '{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}assistant:',
    });
    try {
      expect(other.info.chatTemplateHash).not.toBe(engine.info.chatTemplateHash);
      const r = await other.chat.completions.create({ messages, max_tokens: 1 });
      expect(r.usage.prompt_tokens_details.cached_tokens).toBe(0);
    } finally {
      await other.unload();
    }
  });
});
