/**
 * `generateText` (the helper behind `webgguf generate`) on stories260K with the CPU reference: greedy equals
 * llama.cpp, stop strings end without being emitted, seeds reproduce, bad options name the field.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCpuOps } from '../../../src/backend/cpu/cpu-ops.js';
import { generateText } from '../../../src/engine/generate-text.js';
import { isLlmError } from '../../../src/errors.js';
import { parseGguf } from '../../../src/gguf/parse.js';
import { NodeFileSource } from '../../../src/io/node-file-source.js';
import { loadTransformer } from '../../../src/model/load.js';
import type { Transformer } from '../../../src/model/model.js';
import { createTokenizer } from '../../../src/tokenizer/index.js';
import type { Tokenizer } from '../../../src/tokenizer/tokenizer.js';
import { sharedPath } from '../../helpers/shared-path.js';

const REF = JSON.parse(readFileSync(sharedPath('models', 'stories260K.reference.json'), 'utf8')) as {
  prompt: string;
  greedy_kv_f32: { tokens: number[]; text: string };
};

describe('generateText on stories260K', () => {
  let transformer: Transformer;
  let tokenizer: Tokenizer;
  let close: () => Promise<void>;
  beforeAll(async () => {
    const source = await NodeFileSource.open(sharedPath('models', 'stories260K.gguf'));
    const gguf = await parseGguf(source);
    tokenizer = createTokenizer(gguf.metadata);
    transformer = await loadTransformer(gguf, source, createCpuOps(), { contextLength: 128 });
    close = () => source.close();
  });
  afterAll(async () => {
    transformer.destroy();
    await close();
  });

  it('greedy equals llama.cpp and streams the same text', async () => {
    let streamed = '';
    const r = await generateText({
      transformer,
      tokenizer,
      contextLength: 128,
      prompt: REF.prompt,
      temperature: 0,
      max_tokens: 30,
      onText: (t) => (streamed += t),
    });
    expect(r.tokens).toEqual(REF.greedy_kv_f32.tokens);
    expect(r.text).toBe(REF.greedy_kv_f32.text);
    expect(streamed).toBe(r.text);
    expect(r.finishReason).toBe('length');
    expect(r.route).toBe('argmax');
    expect(r.decodeTokensPerSecond).toBeGreaterThan(0);
  });

  it('a stop string ends generation and is not emitted', async () => {
    const r = await generateText({
      transformer,
      tokenizer,
      contextLength: 128,
      prompt: REF.prompt,
      temperature: 0,
      max_tokens: 30,
      stop: ['Lily'],
    });
    expect(r.text).toBe(', there was a little girl named ');
    expect(r.finishReason).toBe('stop');
  });

  it('the same seed reproduces, with every sampler option on', async () => {
    const o = {
      transformer,
      tokenizer,
      contextLength: 128,
      prompt: 'Once upon a time, a frog',
      temperature: 0.9,
      top_k: 30,
      top_p: 0.9,
      min_p: 0.02,
      repetition_penalty: 1.1,
      frequency_penalty: 0.1,
      presence_penalty: 0.1,
      repeat_last_n: 32,
      logit_bias: { '13': -5 },
      max_tokens: 20,
      seed: 77,
    };
    const a = await generateText(o);
    const b = await generateText(o);
    expect(a.route).toBe('full');
    expect(b.tokens).toEqual(a.tokens);
    expect(a.seed).toBe(77);
  });

  it('names a bad option', async () => {
    await expect(generateText({ transformer, tokenizer, contextLength: 128, prompt: 'x', top_p: 0 })).rejects.toSatisfy(
      (e) => isLlmError(e, 'invalid-request') && (e as { details?: { field?: string } }).details?.field === 'top_p',
    );
    await expect(
      generateText({ transformer, tokenizer, contextLength: 128, prompt: 'x '.repeat(200) }),
    ).rejects.toSatisfy((e) => isLlmError(e, 'context-overflow'));
  });
});
