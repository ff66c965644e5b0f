/**
 * n choices after an image on an M-RoPE model (qwen2vl + a Qwen2.5-VL mmproj, the reference backend): the prompt
 * (image included) is prefilled once, each choice's slot a copy of it, and the choices decode together — each row of
 * the multi-sequence step at its own slot's rope position after the image (mtmd's n_past). Each choice equals an
 * n = 1 request with its seed (`seed + index`): the same tokens and log-probabilities.
 */

import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_QWEN25VL_MMPROJ, qwen25vlMmproj } from '../../../scripts/synthetic/mmproj-qwen25vl.js';
import { createEngine } from '../../../src/api/create-engine.js';
import type { Engine } from '../../../src/api/engine.js';
import type { ChatCompletion, ChatRequestMessage } from '../../../src/api/types.js';
import { RECORDED_FIXTURE_DIR } from '../../helpers/shared-path.js';

const MODEL = `${RECORDED_FIXTURE_DIR}/qwen2vl-q8_0-s1.gguf`;
const MMPROJ = qwen25vlMmproj(2, { ...DEFAULT_QWEN25VL_MMPROJ, nLayers: 1, nEmbdText: 256 });
const TEMPLATE = '{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}assistant:';
const SEED = 41;

function pngUrl(w: number, h: number, seed: number): string {
  const png = new PNG({ width: w, height: h });
  png.data = Buffer.from(
    Array.from({ length: w * h * 4 }, (_, i) => (i % 4 === 3 ? 255 : (i * seed * 31 + seed) % 256)),
  );
  return `data:image/png;base64,${PNG.sync.write(png).toString('base64')}`;
}

const MESSAGES: ChatRequestMessage[] = [
  {
    role: 'user',
    content: [
      { type: 'image_url', image_url: { url: pngUrl(150, 90, 3) } }, // an image of 9 × 6 merged tokens
      { type: 'text', text: 'Describe it.' },
    ],
  },
];

const ask = async (engine: Engine, n: number, seed: number): Promise<ChatCompletion> =>
  (await engine.chat.completions.create({
    messages: MESSAGES,
    n,
    seed,
    max_tokens: 6,
    temperature: 1.5,
    logprobs: true,
    top_logprobs: 2,
  })) as ChatCompletion;

const logprobsOf = (c: ChatCompletion['choices'][number]) => c.logprobs!.content!.map((t) => t.logprob);

describe('n choices after an image on an M-RoPE model', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({
      model: MODEL,
      mmproj: new Blob([MMPROJ.slice()]),
      backend: 'cpu',
      contextLength: 128,
      slots: 4,
      warmup: false,
      chatTemplate: TEMPLATE,
    });
  });
  afterAll(() => engine.unload());

  it('each choice gives the tokens and log-probabilities of an n = 1 request with its seed', async () => {
    const together = await ask(engine, 3, SEED);
    expect(together.choices).toHaveLength(3);
    const texts = new Set(together.choices.map((c) => c.message.content));
    expect(texts.size, 'the seeds should give different choices').toBeGreaterThan(1);
    for (const choice of together.choices) {
      const alone = (await ask(engine, 1, SEED + choice.index)).choices[0]!;
      expect(choice.message.content, `choice ${choice.index}`).toBe(alone.message.content);
      const [a, b] = [logprobsOf(choice), logprobsOf(alone)];
      expect(a).toHaveLength(b.length);
      a.forEach((v, i) => expect(v, `choice ${choice.index} token ${i}`).toBeCloseTo(b[i]!, 4));
    }
  });
});
