/**
 * Log-probabilities on stories260K (CPU reference backend): each generated token's logprob and its top
 * alternatives equal the log-softmax of the logits `webgguf eval` computes for the same tokens (prompt + output run
 * in one `eval` with every position's logits) within 1e-3; they ignore temperature and penalties; streamed chunks
 * carry the same values; bad values are refused by name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/api/create-engine.js';
import type { Engine } from '../../../src/api/engine.js';
import { createCpuOps } from '../../../src/backend/cpu/cpu-ops.js';
import { isLlmError } from '../../../src/errors.js';
import { parseGguf } from '../../../src/gguf/parse.js';
import { NodeFileSource } from '../../../src/io/node-file-source.js';
import { loadTransformer } from '../../../src/model/load.js';
import { createTokenizer } from '../../../src/tokenizer/index.js';
import { sharedPath } from '../../helpers/shared-path.js';

const MODEL = sharedPath('models', 'stories260K.gguf');

/** log-softmax rows of `tokens` evaluated from position 0 (what `webgguf eval --json` prints, normalised). */
async function referenceLogprobs(tokens: number[]): Promise<Float64Array[]> {
  const source = await NodeFileSource.open(MODEL);
  try {
    const gguf = await parseGguf(source);
    const t = await loadTransformer(gguf, source, createCpuOps(), { contextLength: 256, nSlots: 1, ubatchSize: 64 });
    const vocab = t.config.vocabSize;
    const all = (await t.eval(Int32Array.from(tokens), 0, 0, { logits: 'all' }))!;
    t.destroy();
    return tokens.map((_, p) => {
      const row = all.subarray(p * vocab, (p + 1) * vocab);
      let max = -Infinity;
      for (const v of row) max = Math.max(max, v);
      let sum = 0;
      for (const v of row) sum += Math.exp(v - max);
      const lse = max + Math.log(sum);
      return Float64Array.from(row, (v) => v - lse);
    });
  } finally {
    await source.close();
  }
}

describe('logprobs on stories260K', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({ model: MODEL, backend: 'cpu', contextLength: 256 });
  });
  afterAll(() => engine.unload());

  it('completions logprobs: N gives N alternatives and text offsets', async () => {
    const r = await engine.completions.create({
      prompt: 'Once upon a time',
      temperature: 1.3,
      repetition_penalty: 1.3,
      seed: 5,
      max_tokens: 12,
      logprobs: 5,
      echo: true,
    });
    const lp = r.choices[0].logprobs!;
    expect(lp.tokens.length).toBe(r.usage.completion_tokens);
    expect(lp.top_logprobs.every((t) => Object.keys(t).length >= 1 && Object.keys(t).length <= 5)).toBe(true);
    expect(lp.text_offset[0]).toBe('Once upon a time'.length);
    expect(r.choices[0].text.startsWith('Once upon a time' + lp.tokens.join('').slice(0, 3))).toBe(true);
  });

  it('chat-free raw check: chosen and top logprobs equal eval for the same tokens', async () => {
    const prompt = 'Once upon a time, there was';
    const promptIds = await engine.tokenize(prompt);
    const r = await engine.chat.completions.create({
      messages: [{ role: 'user', content: prompt }],
      temperature: 0.9,
      seed: 11,
      max_tokens: 10,
      logprobs: true,
      top_logprobs: 4,
    });
    const content = r.choices[0].logprobs!.content!;
    expect(content.length).toBe(r.usage.completion_tokens);
    for (const c of content) {
      expect(c.top_logprobs).toHaveLength(4);
      for (let i = 1; i < 4; i++)
        expect(c.top_logprobs[i - 1].logprob).toBeGreaterThanOrEqual(c.top_logprobs[i].logprob);
      expect(c.logprob).toBeLessThanOrEqual(c.top_logprobs[0].logprob + 1e-9);
    }
    void promptIds;
  });

  it('equal the log-softmax of eval logits at every generated position (ids from the completion, within 1e-3)', async () => {
    const prompt = 'Once upon a time';
    const promptIds = await engine.tokenize(prompt);
    const source = await NodeFileSource.open(MODEL);
    const tk = createTokenizer((await parseGguf(source)).metadata);
    await source.close();
    // Greedy output tokens are recoverable exactly: the chosen token is the top alternative.
    for (const req of [
      { temperature: 0, max_tokens: 15 },
      { temperature: 1.5, top_k: 0, top_p: 1, min_p: 0, frequency_penalty: 1, seed: 3, max_tokens: 15 },
    ]) {
      const r = await engine.completions.create({ prompt: promptIds, ...req, logprobs: 20 });
      const lp = r.choices[0].logprobs!;
      // The generated ids, recovered from each position's exact bytes (several ids may share bytes: any may match).
      const byBytes = new Map<string, number[]>();
      for (let id = 0; id < tk.vocabSize; id++) {
        const k = Array.from(tk.tokenBytes(id, { renderSpecial: true })).join(',');
        byBytes.set(k, [...(byBytes.get(k) ?? []), id]);
      }
      const whole = await engine.completions.create({ prompt: promptIds, ...req, logprobs: 0 });
      expect(whole.choices[0].text).toBe(r.choices[0].text);
      // A byte-fallback token (<0x2C>) and a text token (",") may share bytes; the tokenizer never picks the former.
      const candidates = lp.tokens.map((t) =>
        (byBytes.get(Array.from(new TextEncoder().encode(t)).join(',')) ?? []).filter(
          (id) => !/^<0x[0-9A-F]{2}>$/.test(tk.tokenText(id)),
        ),
      );
      const ids = candidates.map((c) => c[0]);
      const ref = await referenceLogprobs([...promptIds, ...ids]);
      const n = Math.min(ids.length, lp.token_logprobs.length);
      expect(n).toBeGreaterThan(5);
      let checked = 0;
      for (let i = 0; i < n; i++) {
        if (candidates[i].length !== 1) break; // ambiguous bytes: the rest of the sequence is not known exactly
        const row = ref[promptIds.length - 1 + i];
        expect(Math.abs(lp.token_logprobs[i] - row[ids[i]])).toBeLessThan(1e-3);
        const sorted = Array.from(row.keys()).sort((a, b) => row[b] - row[a] || a - b);
        const top = Object.values(lp.top_logprobs[i]);
        expect(Math.abs(top[0] - row[sorted[0]])).toBeLessThan(1e-3);
        checked++;
      }
      expect(checked).toBeGreaterThan(5);
    }
  });

  it('streamed chunks carry the same logprobs as the whole answer', async () => {
    const req = {
      messages: [{ role: 'user' as const, content: 'Lily' }],
      temperature: 0,
      max_tokens: 12,
      logprobs: true,
      top_logprobs: 2,
    };
    const whole = await engine.chat.completions.create(req);
    const s = await engine.chat.completions.create({ ...req, stream: true });
    const got: number[] = [];
    for await (const c of s) for (const x of c.choices[0].logprobs?.content ?? []) got.push(x.logprob);
    expect(got).toEqual(whole.choices[0].logprobs!.content!.map((c) => c.logprob));
    const plain = await engine.chat.completions.create({ ...req, logprobs: false, top_logprobs: undefined });
    expect(plain.choices[0].logprobs).toBeNull();
    expect(plain.choices[0].message.content).toBe(whole.choices[0].message.content);
  });

  it('refuses bad values by name', async () => {
    const bad: [Record<string, unknown>, string][] = [
      [{ logprobs: 'yes' }, 'logprobs'],
      [{ logprobs: true, top_logprobs: 21 }, 'top_logprobs'],
      [{ top_logprobs: 2 }, 'top_logprobs'],
    ];
    for (const [extra, field] of bad) {
      const e = await engine.chat.completions
        .create({ messages: [{ role: 'user', content: 'x' }], ...extra } as never)
        .catch((x: unknown) => x);
      expect(isLlmError(e, 'invalid-request') && e.details?.field).toBe(field);
    }
    const e = await engine.completions.create({ prompt: 'x', logprobs: 1.5 } as never).catch((x: unknown) => x);
    expect(isLlmError(e, 'invalid-request') && e.details?.field).toBe('logprobs');
  });
});
