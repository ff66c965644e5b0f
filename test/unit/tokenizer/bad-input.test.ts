/**
 * Hostile input: lone surrogates, NUL bytes, huge strings, out-of-range or non-integer ids. Each has a defined result
 * or an `LlmError('tokenizer')`, never a hang or a crash.
 */

import { describe, expect, it } from 'vitest';
import { isLlmError } from '../../../src/errors.js';
import { sharedPath } from '../../helpers/shared-path.js';
import { loadTokenizer } from './vocab-fixtures.js';

const VOCABS = ['llama-spm', 'gpt-2', 'llama-bpe', 'bert-bge'];
const vocab = (name: string): string => sharedPath('tokenizer-vectors', `ggml-vocab-${name}.gguf`);

describe.each(VOCABS)('%s', (name) => {
  it('treats lone surrogates as U+FFFD', async () => {
    const tok = await loadTokenizer(vocab(name));
    expect(tok.encode('a\ud800b\udc00c')).toEqual(tok.encode('a\ufffdb\ufffdc'));
    expect(tok.encode('\ud83d')).toEqual(tok.encode('\ufffd'));
  });

  it('tokenizes NUL bytes and control characters', async () => {
    const tok = await loadTokenizer(vocab(name));
    const ids = tok.encode('a\u0000b\u0001\u007f');
    expect(Array.isArray(ids)).toBe(true);
    for (const id of ids) expect(id).toBeGreaterThanOrEqual(0);
  });

  it('rejects invalid ids with LlmError("tokenizer")', async () => {
    const tok = await loadTokenizer(vocab(name));
    for (const bad of [-1, tok.vocabSize, 1.5, Number.NaN, 2 ** 40]) {
      for (const fn of [
        () => tok.decode([bad]),
        () => tok.tokenText(bad),
        () => tok.tokenBytes(bad),
        () => tok.createStreamDecoder().push(bad),
      ]) {
        let err: unknown;
        try {
          fn();
        } catch (e) {
          err = e;
        }
        expect(isLlmError(err, 'tokenizer'), `${bad}: ${String(err)}`).toBe(true);
        expect((err as Error).message).toMatch(/out of range/);
      }
    }
  });

  // 10 MB once (BPE); 0.25 MB for the others keeps the suite fast on a shared 2-core machine. All paths are linear.
  const megabytes = name === 'gpt-2' ? 10 : 0.25;
  it(`handles a ${megabytes} MB string`, async () => {
    const tok = await loadTokenizer(vocab(name));
    const sentence = 'The quick brown fox jumps over the lazy dog, 1234567 times; naïve café — 東京 🚀!\n';
    const big = sentence.repeat(Math.ceil((megabytes * 1048576) / sentence.length));
    const ids = tok.encode(big);
    expect(ids.length).toBeGreaterThan(big.length / 10);
  });

  it('handles a 64 KB word without spaces', async () => {
    const tok = await loadTokenizer(vocab(name));
    const ids = tok.encode('ab'.repeat(32 << 10));
    expect(ids.length).toBeGreaterThan(0);
  });
});

describe('non-string input', () => {
  it('is LlmError("tokenizer")', async () => {
    const tok = await loadTokenizer(vocab('gpt-2'));
    expect(() => tok.encode(42 as unknown as string)).toThrow(/expected a string/);
    expect(() => tok.decode('12' as unknown as number[])).toThrow(/array of token ids/);
  });
});
