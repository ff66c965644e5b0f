/**
 * Chat with an image on an M-RoPE model (qwen2vl + a Qwen2.5-VL mmproj) through the engine: the image chunk reaches
 * the model with its grid (`PromptImage.grid`), so a follow-up that reuses the cached KV — resuming in the text after
 * the image, whose rope positions the model keeps per slot — answers exactly as the first request and as a fresh
 * engine; a slot copied for the prefix keeps them too. Such a prefix is persisted with its images' spans (its KV
 * alone does not say where the text after the image sits) and restored by a new engine (cpu or WASM), which then
 * answers as a cold run; an entry whose spans were altered, do not fit its tokens or are missing is never served.
 */

import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_QWEN25VL_MMPROJ, qwen25vlMmproj } from '../../../scripts/synthetic/mmproj-qwen25vl.js';
import { createEngine } from '../../../src/api/create-engine.js';
import type { Engine, EngineOptions } from '../../../src/api/engine.js';
import type { ChatCompletion, ChatRequestMessage } from '../../../src/api/types.js';
import { memoryPromptCacheStore, type PromptCacheRecord } from '../../../src/io/prompt-cache-store.js';
import { sha256Hex } from '../../../src/io/sha256.js';
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
    const url = pngUrl(150, 90, 3); // 9 × 6 merged tokens: the text after it runs 45 positions behind its KV index
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

  it('a prefix holding the image is persisted with its rope positions and restored: answers as a cold run', {
    timeout: 120_000,
  }, async () => {
    const store = memoryPromptCacheStore();
    const url = pngUrl(150, 90, 5); // 9 × 6 merged tokens: advances 9 positions, not 54
    const e = await open({ persistedCache: { store, auto: false } });
    let cold: ChatCompletion;
    try {
      cold = await answer(e, ask(url, 'What is it?'));
      expect(await e.saveCache()).toBe(1);
    } finally {
      await e.unload();
    }
    const [saved] = await store.list();
    const start = saved!.tokens.indexOf(saved!.tokens.find((t) => t < 0)!);
    expect(saved!.ropeImages).toEqual([[start, 54, 9]]);
    const rows = (await store.readRows(saved!.id))!;

    // A new engine restores it: the prompt up to its last token comes from the entry, the answer is the cold one's.
    const warm = await open({ persistedCache: { store, auto: false } });
    try {
      const again = await answer(warm, ask(url, 'What is it?'));
      expect(again.usage.prompt_tokens_details?.cached_tokens).toBe(cold.usage.prompt_tokens - 1);
      expect(logprobs(again)).toEqual(logprobs(cold));
    } finally {
      await warm.unload();
    }

    // On the WASM backend too: an entry it saved, restored by the next WASM engine, answers as its cold run.
    const wasmStore = memoryPromptCacheStore();
    const wasm = { backend: 'wasm', threads: 1, persistedCache: { store: wasmStore, auto: false } } as const;
    const first = await open(wasm);
    let coldWasm: ChatCompletion;
    try {
      coldWasm = await answer(first, ask(url, 'What is it?'));
      expect(await first.saveCache()).toBe(1);
    } finally {
      await first.unload();
    }
    const next = await open(wasm);
    try {
      const restored = await answer(next, ask(url, 'What is it?'));
      expect(restored.usage.prompt_tokens_details?.cached_tokens).toBe(cold.usage.prompt_tokens - 1);
      expect(logprobs(restored)).toEqual(logprobs(coldWasm));
    } finally {
      await next.unload();
    }

    // Stale or corrupt image spans are never served: another span under the old id, a span that does not fit the
    // tokens under a matching id, and an entry without its spans.
    const idOf = (spans?: readonly (readonly [number, number, number])[]) =>
      sha256Hex(JSON.stringify([saved!.model, saved!.key, saved!.kv, saved!.tokens, ...(spans ? [spans] : [])]));
    const { ropeImages: _, ...bare } = saved!;
    const broken: PromptCacheRecord[] = [
      { ...saved!, ropeImages: [[start, 54, 8]] as const },
      { ...saved!, id: idOf([[start, 54, 55]]), ropeImages: [[start, 54, 55]] as const },
      { ...saved!, id: idOf([[start - 1, 54, 9]]), ropeImages: [[start - 1, 54, 9]] as const },
      { ...bare, id: idOf() },
    ];
    for (const record of broken) {
      const bad = memoryPromptCacheStore();
      await bad.put(record, rows);
      const e2 = await open({ persistedCache: { store: bad, auto: false } });
      try {
        const r = await answer(e2, ask(url, 'What is it?'));
        expect(r.usage.prompt_tokens_details?.cached_tokens ?? 0, JSON.stringify(record.ropeImages)).toBe(0);
        expect(logprobs(r)).toEqual(logprobs(cold));
      } finally {
        await e2.unload();
      }
    }
  });

  it('an image request persists its system prompt automatically: the prefix before the image, restored by the next engine', {
    timeout: 120_000,
  }, async () => {
    const store = memoryPromptCacheStore();
    const system = 'You look at pictures carefully and answer in a few plain words, nothing more.';
    const messages: ChatRequestMessage[] = [{ role: 'system', content: system }, ...ask(pngUrl(60, 60, 7), 'What?')];
    const first = await open({ persistedCache: { store, auto: true } });
    let cold: ChatCompletion;
    try {
      cold = await answer(first, messages);
    } finally {
      await first.unload();
    }
    const [saved, more] = await store.list();
    expect(more).toBeUndefined();
    expect(saved!.tokens.length).toBeGreaterThanOrEqual(8);
    expect(saved!.tokens.every((t) => t >= 0)).toBe(true); // no image placeholder
    expect(saved!.ropeImages).toBeUndefined();
    const next = await open({ persistedCache: { store, auto: true } });
    try {
      const warm = await answer(next, messages);
      expect(warm.usage.prompt_tokens_details?.cached_tokens).toBe(saved!.tokens.length);
      expect(logprobs(warm)).toEqual(logprobs(cold));
    } finally {
      await next.unload();
    }
  });
});
