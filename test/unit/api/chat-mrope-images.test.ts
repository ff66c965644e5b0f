/**
 * Chat with an image on an M-RoPE model (qwen2vl + a Qwen2.5-VL mmproj) through the engine: the image chunk reaches
 * the model with its grid (`PromptImage.grid`), so a follow-up that reuses the cached KV — resuming in the text after
 * the image, whose rope positions the model keeps per slot — answers exactly as the first request and as a fresh
 * engine; a slot copied for the prefix keeps them too. Such a prefix is never persisted (its KV alone does not say
 * where the text after the image sits).
 */

import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_QWEN25VL_MMPROJ, qwen25vlMmproj } from '../../../scripts/synthetic/mmproj-qwen25vl.js';
import { createEngine } from '../../../src/api/create-engine.js';
import type { Engine, EngineOptions } from '../../../src/api/engine.js';
import type { ChatCompletion, ChatRequestMessage } from '../../../src/api/types.js';
import { listPromptCaches, memoryPromptCacheStore } from '../../../src/io/prompt-cache-store.js';
import { RECORDED_FIXTURE_DIR } from '../../helpers/shared-path.js';

const MODEL = `${RECORDED_FIXTURE_DIR}/qwen2vl-q8_0-s1.gguf`;
const MMPROJ = qwen25vlMmproj(2, { ...DEFAULT_QWEN25VL_MMPROJ, nLayers: 1, nEmbdText: 256 });
const TEMPLATE = '{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}assistant:';

function pngUrl(w: number, h: number, seed: number): string {
  const png = new PNG({ width: w, height: h });
  png.data = Buffer.from(
    Array.from({ length: w * h * 4 }, (_, i) => (i % 4 === 3 ? 255 : (i * seed * 31 + seed) % 256)),
  );
  return `data:image/png;base64,${PNG.sync.write(png).toString('base64')}`;
}

const ask = (url: string, text: string): ChatRequestMessage[] => [
  {
    role: 'user',
    content: [
      { type: 'image_url', image_url: { url } },
      { type: 'text', text },
    ],
  },
];

async function answer(engine: Engine, messages: ChatRequestMessage[]): Promise<ChatCompletion> {
  return (await engine.chat.completions.create({
    messages,
    max_tokens: 3,
    temperature: 0,
    logprobs: true,
    top_logprobs: 3,
  })) as ChatCompletion;
}
const logprobs = (c: ChatCompletion) =>
  c.choices[0].logprobs!.content!.map((t) => t.top_logprobs.map((x) => x.logprob));

const open = (options: Partial<EngineOptions> = {}) =>
  createEngine({
    model: MODEL,
    mmproj: new Blob([MMPROJ.slice()]),
    backend: 'cpu',
    contextLength: 192,
    warmup: false,
    chatTemplate: TEMPLATE,
    ...options,
  });

describe('chat with an image on an M-RoPE model', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await open({ slots: 2, persistedCache: { store: memoryPromptCacheStore(), auto: false } });
  });
  afterAll(() => engine.unload());

  it('a follow-up reusing the KV after the image answers as the first request and as a fresh engine', async () => {
    const url = pngUrl(150, 90, 3); // 5 × 3 merged tokens: the text after it runs 10 positions behind its KV index
    const first = await answer(engine, ask(url, 'Describe it.'));
    const again = await answer(engine, ask(url, 'Describe it.'));
    expect(again.usage.prompt_tokens_details?.cached_tokens).toBe(first.usage.prompt_tokens - 1);
    expect(logprobs(again)).toEqual(logprobs(first));
    const fresh = await open();
    try {
      expect(logprobs(await answer(fresh, ask(url, 'Describe it.')))).toEqual(logprobs(first));
    } finally {
      await fresh.unload();
    }
  });

  it('a prefix holding the image is not persisted', async () => {
    const store = memoryPromptCacheStore();
    const e = await open({ persistedCache: { store, auto: false } });
    try {
      await answer(e, ask(pngUrl(60, 60, 4), 'What is it?'));
      expect(await e.saveCache()).toBe(0);
      expect(await listPromptCaches({ store })).toEqual([]);
    } finally {
      await e.unload();
    }
  });
});
