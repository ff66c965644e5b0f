/**
 * Engine state sweep through the chat API (issues 15, 16, 17, 20): the system-prompt boundary the chat layer gives
 * the prompt cache (a snapshot on hybrid models), the default context shift of chat requests, streamed aborts, n = 3
 * then a turn on choice 2, and image chunks on an M-RoPE model (qwen2vl with a tiny Qwen2.5-VL mmproj): aborts at
 * every forward of an image prompt, n = 3 with an image, concurrent image requests, LRU eviction of image prefixes.
 * Every answer is checked against a cold run of the same messages (text equal, logprobs within float noise).
 * Backends: wasm by default (the cpu reference is ~5× slower), SWEEP_ENGINE_BACKENDS=cpu,wasm to choose; SWEEP_ENGINE_FULL=1 runs both (every model).
 */

import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_QWEN25VL_MMPROJ, qwen25vlMmproj } from '../../../scripts/synthetic/mmproj-qwen25vl.js';
import type { ChatRequestMessage } from '../../../src/api/types.js';
import { isLlmError } from '../../../src/errors.js';
import {
  abortOnEval,
  chatChecked,
  chatComplete,
  type EnginePair,
  openPair,
  SWEEP_BACKENDS,
  SWEEP_FULL,
  SWEEP_MODELS,
} from '../../helpers/engine-sweep.js';

const QUICK = new Set(['llama3', 'gemma3', 'qwen35', 'qwen3moe']);
const MODELS = SWEEP_FULL ? SWEEP_MODELS : SWEEP_MODELS.filter((m) => QUICK.has(m.name));
const TEMPLATE = '{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}assistant:';
const BASE = { ubatchSize: 8, batchSize: 8, threads: 1, chatTemplate: TEMPLATE } as const;

const system = (text: string): ChatRequestMessage => ({ role: 'system', content: text });
const user = (text: string): ChatRequestMessage => ({ role: 'user', content: text });
const assistant = (text: string): ChatRequestMessage => ({ role: 'assistant', content: text });
const SYSTEM = system('you are a small test model that answers in short words about colors and shapes');

for (const backend of SWEEP_BACKENDS) {
  for (const model of MODELS) {
    describe(`chat state sweep: ${model.name} (${model.family}) on ${backend}`, () => {
      let pair: EnginePair;
      beforeAll(async () => {
        pair = await openPair(model, { backend, ...BASE, contextLength: 160, persistedCache: false });
      });
      afterAll(() => pair.close());

      it('multi-turn with a system prompt, then a second conversation sharing it', async () => {
        const t1 = [SYSTEM, user('name a color')];
        const a1 = await chatChecked(pair, t1, 'turn 1');
        const a2 = await chatChecked(pair, [...t1, assistant(a1.text), user('and a shape')], 'turn 2');
        expect(a2.cached).toBeGreaterThan(0);
        const b = await chatChecked(pair, [SYSTEM, user('say one word')], 'second conversation');
        expect(b.cached).toBeGreaterThan(0); // the system prompt (a snapshot on hybrid models)
      });

      it('a streamed answer aborted mid-decode, then the same and a follow-up', async () => {
        const msgs = [SYSTEM, user('count to three')];
        const ac = new AbortController();
        const stream = await pair.warm.chat.completions.create({
          messages: msgs,
          temperature: 0,
          max_tokens: 8,
          stream: true,
          signal: ac.signal,
        });
        let chunks = 0;
        try {
          for await (const _ of stream) if (++chunks === 3) ac.abort();
        } catch (e) {
          expect(isLlmError(e, 'aborted'), String(e)).toBe(true);
        }
        const a = await chatChecked(pair, msgs, 'same after a streamed abort');
        await chatChecked(pair, [...msgs, assistant(a.text), user('again')], 'follow-up after a streamed abort');
      });

      it('n = 3 choices, then a turn on choice 2', async () => {
        const msgs = [SYSTEM, user('pick a shape')];
        const r = await pair.warm.chat.completions.create({
          messages: msgs,
          n: 3,
          temperature: 1,
          seed: 9,
          max_tokens: 5,
        });
        const second = r.choices[1]!.message.content;
        await chatChecked(pair, [...msgs, assistant(second), user('why')], 'turn on choice 2');
      });
    });

    describe(`chat context shift: ${model.name} (${model.family}) on ${backend}`, () => {
      it('a chat answer running past the context (shifted where llama.cpp shifts), then other turns', async () => {
        const pair = await openPair(model, { backend, ...BASE, contextLength: 96, slots: 1, persistedCache: false });
        try {
          const msgs = [SYSTEM, user('tell a long story')];
          const long = await chatComplete(pair.warm, msgs, { max_tokens: 120 });
          expect(long.finish).toBe('length');
          await chatChecked(pair, msgs, 'the same messages after a shift', { max_tokens: 4 });
          await chatChecked(pair, [SYSTEM, user('one word')], 'the system prompt after a shift', { max_tokens: 4 });
        } finally {
          await pair.close();
        }
      });
    });
  }

  describe(`image chunks (qwen2vl + Qwen2.5-VL mmproj) on ${backend}`, () => {
    const qwen2vl = SWEEP_MODELS.find((m) => m.name === 'qwen2vl')!;
    const mmproj = new Blob([qwen25vlMmproj(2, { ...DEFAULT_QWEN25VL_MMPROJ, nLayers: 1, nEmbdText: 256 }).slice()]);
    const png = (w: number, h: number, seed: number): string => {
      const p = new PNG({ width: w, height: h });
      p.data = Buffer.from(
        Array.from({ length: w * h * 4 }, (_, i) => (i % 4 === 3 ? 255 : (i * seed * 31 + seed) % 256)),
      );
      return `data:image/png;base64,${PNG.sync.write(p).toString('base64')}`;
    };
    const ask = (url: string, text: string): ChatRequestMessage => ({
      role: 'user',
      content: [
        { type: 'text', text: 'look' },
        { type: 'image_url', image_url: { url } },
        { type: 'text', text },
      ],
    });
    const img1 = png(20, 12, 1);
    const img2 = png(16, 16, 2);
    let pair: EnginePair;
    beforeAll(async () => {
      pair = await openPair(qwen2vl, { backend, ...BASE, mmproj, contextLength: 192, persistedCache: false });
    });
    afterAll(() => pair.close());

    it('an image turn, a follow-up reusing it, another image sharing the system prompt', async () => {
      const t1 = [SYSTEM, ask(img1, 'what is it')];
      const a1 = await chatChecked(pair, t1, 'image turn 1');
      const a2 = await chatChecked(pair, [...t1, assistant(a1.text), user('more')], 'image turn 2');
      expect(a2.cached).toBeGreaterThan(0);
      await chatChecked(pair, [SYSTEM, ask(img2, 'what is it')], 'another image');
    });

    it('aborts at every forward of an image prompt, then the same and another image', async () => {
      const msgs = [SYSTEM, ask(img1, 'describe')];
      for (const at of SWEEP_FULL ? [1, 2, 3, 4, 5, 6, 7] : [1, 3, 5]) {
        const ac = new AbortController();
        const restore = abortOnEval(pair, ac, at);
        try {
          await chatComplete(pair.warm, msgs, { signal: ac.signal });
        } catch (e) {
          expect(isLlmError(e, 'aborted'), String(e)).toBe(true);
        } finally {
          restore();
        }
        await chatChecked(pair, msgs, `same after abort ${at}`);
        await chatChecked(pair, [SYSTEM, ask(img2, 'describe')], `another image after abort ${at}`);
      }
    });

    it('n = 3 with an image, then a turn on choice 2; concurrent image requests', async () => {
      const msgs = [SYSTEM, ask(img2, 'name it')];
      const r = await pair.warm.chat.completions.create({
        messages: msgs,
        n: 3,
        temperature: 1,
        seed: 4,
        max_tokens: 4,
      });
      await chatChecked(pair, [...msgs, assistant(r.choices[1]!.message.content), user('ok')], 'image choice 2 turn');
      const reqs = [
        [SYSTEM, ask(img1, 'a')],
        [SYSTEM, ask(img2, 'b')],
        [SYSTEM, user('no image')],
      ];
      const warm = await Promise.all(reqs.map((m) => chatComplete(pair.warm, m)));
      for (const [i, m] of reqs.entries()) {
        const again = await chatChecked(pair, m, `concurrent ${i}`);
        expect(again.text).toBe(warm[i]!.text);
      }
    });
  });
}
