/**
 * Images in chat requests (issue #17): `createEngine({ model, mmproj })`, OpenAI `image_url` parts (data: URLs and
 * Blobs) placed where the template renders them, framed by the projector's markers, counted in `usage`; the prompt
 * cache reuses a same-image prefix and never matches another image; bad input is `invalid-request`.
 * Model: the random-weight gemma3 fixture (n_embd 256); mmproj: the synthetic gemma3 projector at width 256 (4 image
 * tokens for any image).
 */

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_GEMMA3_MMPROJ, gemma3Mmproj } from '../../../scripts/synthetic/mmproj-gemma3.js';
import { createEngine } from '../../../src/api/create-engine.js';
import type { Engine } from '../../../src/api/engine.js';
import type { ChatCompletion, ChatRequestMessage } from '../../../src/api/types.js';
import { expectLlmError } from '../../helpers/llm-error.js';
import { sharedPath } from '../../helpers/shared-path.js';

const MODEL = sharedPath('models', 'arch', 'gemma3-f16.gguf');
const MMPROJ = gemma3Mmproj(5, { ...DEFAULT_GEMMA3_MMPROJ, nEmbdText: 256 });
const IMAGE_TOKENS = 4; // (64 / 8 patches / 4 merge)²

/** A w × h PNG whose pixels follow `seed`, as a data: URL. */
function pngUrl(w: number, h: number, seed: number): string {
  const png = new PNG({ width: w, height: h });
  png.data = Buffer.from(
    Array.from({ length: w * h * 4 }, (_, i) => (i % 4 === 3 ? 255 : (i * seed * 31 + seed) % 256)),
  );
  return `data:image/png;base64,${PNG.sync.write(png).toString('base64')}`;
}

const ask = (url: string | Blob, text = 'What is in the picture?'): ChatRequestMessage[] => [
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
    max_tokens: 2,
    temperature: 0,
    logprobs: true,
    top_logprobs: 3,
  })) as ChatCompletion;
}
const firstLogprobs = (c: ChatCompletion) => c.choices[0].logprobs!.content![0].top_logprobs.map((t) => t.logprob);

describe('chat with images', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({
      model: MODEL,
      mmproj: new Blob([MMPROJ.slice()]),
      backend: 'cpu',
      contextLength: 96,
      slots: 2,
      warmup: false,
    });
  });
  afterAll(() => engine.unload());

  it('counts the image tokens and its markers in usage; the image changes the answer', async () => {
    const text = await answer(engine, [{ role: 'user', content: 'What is in the picture?' }]);
    const a = await answer(engine, ask(pngUrl(20, 12, 1)));
    const b = await answer(engine, ask(new Blob([Buffer.from(pngUrl(20, 12, 2).split(',')[1], 'base64')])));
    const framing =
      (await engine.tokenize('<start_of_image>', { parseSpecial: true })).length +
      (await engine.tokenize('<end_of_image>', { parseSpecial: true })).length;
    expect(a.usage.prompt_tokens).toBeGreaterThanOrEqual(text.usage.prompt_tokens + IMAGE_TOKENS + framing - 1);
    expect(b.usage.prompt_tokens).toBe(a.usage.prompt_tokens);
    expect(firstLogprobs(a)).not.toEqual(firstLogprobs(b)); // other pixels, other logits
  });

  it('an http URL is fetched and gives what the same bytes as a data: URL give', async () => {
    const url = pngUrl(16, 16, 9);
    const bytes = Buffer.from(url.split(',')[1], 'base64');
    const server = createServer((_, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(bytes));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const fetched = await answer(engine, ask(`http://127.0.0.1:${port}/cat.png`));
      expect(firstLogprobs(fetched)).toEqual(firstLogprobs(await answer(engine, ask(url))));
    } finally {
      server.close();
    }
  });

  it('a follow-up about the same image reuses its KV; another image never matches past its start', async () => {
    const url = pngUrl(30, 30, 3);
    const first = await answer(engine, ask(url, 'Describe it.'));
    const again = await answer(engine, ask(url, 'Describe it.'));
    expect(again.usage.prompt_tokens_details?.cached_tokens).toBe(first.usage.prompt_tokens - 1);
    expect(firstLogprobs(again)).toEqual(firstLogprobs(first)); // the cached KV is the same image's
    const other = await answer(engine, ask(pngUrl(30, 30, 4), 'Describe it.'));
    const start = again.usage.prompt_tokens - IMAGE_TOKENS; // an upper bound of the image chunk's start
    expect(other.usage.prompt_tokens_details?.cached_tokens).toBeLessThan(start);
    const fresh = await createEngine({
      model: MODEL,
      mmproj: new Blob([MMPROJ.slice()]),
      backend: 'cpu',
      contextLength: 96,
      warmup: false,
    });
    try {
      expect(firstLogprobs(await answer(fresh, ask(pngUrl(30, 30, 4), 'Describe it.')))).toEqual(firstLogprobs(other));
    } finally {
      await fresh.unload();
    }
  });

  it("truncate: 'history' drops an old turn's image with it", async () => {
    const long = 'Once upon a time there was a robot who liked to count. '.repeat(6);
    const messages: ChatRequestMessage[] = [
      ...ask(pngUrl(10, 10, 5), long),
      { role: 'assistant', content: 'A robot.' },
      ...ask(pngUrl(10, 10, 6), 'And this one?'),
    ];
    const r = (await engine.chat.completions.create({
      messages,
      max_tokens: 2,
      truncate: 'history',
    })) as ChatCompletion;
    expect(r.usage.prompt_tokens).toBeLessThan(96);
    await expectLlmError(engine.chat.completions.create({ messages, max_tokens: 2 }), 'context-overflow');
  });

  it('bad image input is invalid-request naming the part', async () => {
    const create = (messages: ChatRequestMessage[]) => engine.chat.completions.create({ messages, max_tokens: 1 });
    await expectLlmError(create(ask('file:///etc/passwd')), 'invalid-request', /content\[0\]/);
    await expectLlmError(create(ask('data:image/png;base64,aGVsbG8=')), 'invalid-request', /not an image|image/i);
    const cut = pngUrl(8, 8, 1).slice(0, 80);
    await expectLlmError(create(ask(cut)), 'invalid-request');
    const bad = [{ role: 'user', content: [{ type: 'image_url', image_url: {} }] }] as unknown as ChatRequestMessage[];
    await expectLlmError(create(bad), 'invalid-request', /image_url/);
  });

  it('an image sent to a text-only engine, or an mmproj of another width, is invalid-request', async () => {
    const textOnly = await createEngine({ model: MODEL, backend: 'cpu', contextLength: 64, warmup: false });
    try {
      await expectLlmError(
        textOnly.chat.completions.create({ messages: ask(pngUrl(4, 4, 1)), max_tokens: 1 }),
        'invalid-request',
        /mmproj/,
      );
    } finally {
      await textOnly.unload();
    }
    const narrow = new Blob([gemma3Mmproj(5, DEFAULT_GEMMA3_MMPROJ).slice()]); // projects to 64, the model is 256 wide
    await expectLlmError(
      createEngine({ model: MODEL, mmproj: narrow, backend: 'cpu', contextLength: 64, warmup: false }),
      'invalid-request',
      /256|64/,
    );
  });

  it('a WASM engine encodes the image on its own WASM backend: the same answer as the cpu engine', async () => {
    const wasm = await createEngine({
      model: MODEL,
      mmproj: new Blob([MMPROJ.slice()]),
      backend: 'wasm',
      threads: 1,
      contextLength: 96,
      warmup: false,
    });
    try {
      const url = pngUrl(30, 18, 3);
      const [a, b] = [await answer(engine, ask(url)), await answer(wasm, ask(url))];
      expect(b.usage.prompt_tokens).toBe(a.usage.prompt_tokens);
      expect(b.choices[0].message.content).toBe(a.choices[0].message.content);
      firstLogprobs(b).forEach((lp, i) => expect(lp).toBeCloseTo(firstLogprobs(a)[i], 2));
    } finally {
      await wasm.unload();
    }
  });
});
