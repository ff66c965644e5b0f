/**
 * Tokenizer behaviour beyond the llama.cpp vectors: vocabularies without vectors load, unsupported types are refused,
 * special-token parsing, BOS/EOS/SEP, end-of-generation sets, detokenization and the streaming decoder.
 */

import { describe, expect, it } from 'vitest';
import { isLlmError } from '../../../src/errors.js';
import type { GgufValue } from '../../../src/gguf/types.js';
import { PRE_TOKENIZER_NAMES, createTokenizer } from '../../../src/tokenizer/index.js';
import { BYTE_TO_CHAR } from '../../../src/tokenizer/unicode.js';
import { sharedPath } from '../../helpers/shared-path.js';
import { loadMetadata, loadTokenizer, readVectors } from './vocab-fixtures.js';

const vocab = (name: string): string => sharedPath('tokenizer-vectors', `ggml-vocab-${name}.gguf`);

function expectTokenizerError(fn: () => unknown, pattern: RegExp): void {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(isLlmError(err, 'tokenizer'), String(err)).toBe(true);
  expect((err as Error).message).toMatch(pattern);
}

describe('vocabularies without test vectors', () => {
  it.each([
    ['baichuan', 'llama', 64000],
    ['gpt-neox', 'gpt2', 50432],
  ])('%s loads and round-trips', async (name, model, size) => {
    const tok = await loadTokenizer(vocab(name));
    expect(tok.model).toBe(model);
    expect(tok.vocabSize).toBe(size);
    const ids = tok.encode('Hello world, this is a test.');
    expect(ids.length).toBeGreaterThan(3);
    expect(tok.decode(ids)).toBe('Hello world, this is a test.');
  });
});

describe('refusals', () => {
  const base = { 'tokenizer.ggml.tokens': ['a', 'b'] } as Record<string, GgufValue>;
  it('refuses unsupported vocabulary types by name', () => {
    for (const model of ['nonsense', 'toString', '__proto__']) {
      expectTokenizerError(
        () => createTokenizer({ ...base, 'tokenizer.ggml.model': model }),
        new RegExp(`'${model}' is not supported`),
      );
    }
    for (const model of ['none', 'no_vocab']) {
      expectTokenizerError(
        () => createTokenizer({ ...base, 'tokenizer.ggml.model': model }),
        /has no vocabulary; pass token ids/,
      );
    }
  });
  it('refuses an unknown BPE pre-tokenizer', () => {
    expectTokenizerError(
      () =>
        createTokenizer({
          ...base,
          'tokenizer.ggml.model': 'gpt2',
          'tokenizer.ggml.pre': 'martian',
          'tokenizer.ggml.merges': [],
        }),
      /unknown pre-tokenizer.*'martian'/,
    );
  });
  it('refuses missing or malformed vocabularies', () => {
    expectTokenizerError(() => createTokenizer({}), /tokenizer.ggml.model' is missing/);
    expectTokenizerError(() => createTokenizer({ 'tokenizer.ggml.model': 'llama' }), /tokens' is missing/);
    expectTokenizerError(
      () => createTokenizer({ 'tokenizer.ggml.model': 'llama', 'tokenizer.ggml.tokens': 'abc' }),
      /array of strings/,
    );
    expectTokenizerError(
      () => createTokenizer({ ...base, 'tokenizer.ggml.model': 'llama', 'tokenizer.ggml.scores': [0] }),
      /scores' has 1 entries for 2 tokens/,
    );
    expectTokenizerError(
      () => createTokenizer({ ...base, 'tokenizer.ggml.model': 'gpt2', 'tokenizer.ggml.pre': 'gpt-2' }),
      /merges' is missing/,
    );
  });
});

describe('every pre-tokenizer', () => {
  // A byte-level vocabulary without merges: each UTF-8 byte is one token, so every split must cover the text exactly.
  const bytesVocab = {
    'tokenizer.ggml.model': 'gpt2',
    'tokenizer.ggml.tokens': [...BYTE_TO_CHAR],
    'tokenizer.ggml.merges': [],
  };
  const sample = "Hello, y'all! 3.14159 €100 — naïve café\n\n\tПривет 東京タワー 😀 ﷺ \u00a0end  ";
  // SPM-style BPE pre-tokenizers (Gemma 4 …) run on raw UTF-8 with spaces escaped, falling back to <0xXX> tokens.
  const hexVocab = {
    'tokenizer.ggml.model': 'gpt2',
    'tokenizer.ggml.tokens': Array.from(
      { length: 256 },
      (_, b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`,
    ),
    'tokenizer.ggml.merges': [],
  };
  const spmStyle = new Set(['gemma4', 'granite-embed-multi-311m', 'sarvam-moe']);
  const rawUtf8 = new Set([...spmStyle, 'whitespace']);
  it.each(PRE_TOKENIZER_NAMES)('%s compiles and covers the text', (pre) => {
    const escaped = spmStyle.has(pre);
    const tok = createTokenizer({ ...(rawUtf8.has(pre) ? hexVocab : bytesVocab), 'tokenizer.ggml.pre': pre } as Record<
      string,
      GgufValue
    >);
    const ids = tok.encode(sample);
    expect(ids.length).toBe(new TextEncoder().encode(escaped ? sample.replaceAll(' ', '\u2581') : sample).length);
  });
});

describe('special tokens', () => {
  it('parses control tokens only with parseSpecial; user-defined ones always', async () => {
    const tok = await loadTokenizer(vocab('llama-bpe'));
    const text = '<|begin_of_text|>Hi<|eot_id|>';
    expect(tok.encode(text, { parseSpecial: true })).toEqual([128000, 13347, 128009]);
    expect(tok.encode(text)).not.toContain(128000);
    const qwen3 = await loadTokenizer(sharedPath('models', 'arch', 'qwen3-f16.gguf'));
    const think = qwen3.tokenId('<think>')!;
    expect(qwen3.encode('a<think>b')).toContain(think); // USER_DEFINED: split out even without parseSpecial
  });

  it('adds BOS/EOS/SEP as the vocabulary says', async () => {
    const spm = await loadTokenizer(vocab('llama-spm'));
    expect(spm.addBos).toBe(true);
    expect(spm.encode('Hello', { addSpecial: true })[0]).toBe(1);
    const bert = await loadTokenizer(vocab('bert-bge'));
    const ids = bert.encode('hello', { addSpecial: true });
    expect([ids[0], ids[ids.length - 1]]).toEqual([101, 102]);
    const qwen = await loadTokenizer(vocab('qwen2'));
    expect(qwen.addBos).toBe(false);
    expect(qwen.encode('hello', { addSpecial: true })).toEqual(qwen.encode('hello'));
  });

  it('finds the end-of-generation tokens', async () => {
    const llama3 = await loadTokenizer(vocab('llama-bpe'));
    for (const t of ['<|end_of_text|>', '<|eot_id|>']) expect(llama3.eogIds.has(llama3.tokenId(t)!), t).toBe(true);
    expect(llama3.eotId).toBe(llama3.tokenId('<|eot_id|>'));
    const qwen = await loadTokenizer(vocab('qwen2'));
    for (const t of ['<|endoftext|>', '<|im_end|>']) expect(qwen.eogIds.has(qwen.tokenId(t)!), t).toBe(true);
    const gemma = await loadTokenizer(sharedPath('models', 'arch', 'gemma2-f16.gguf'));
    expect(gemma.eogIds.has(gemma.tokenId('<end_of_turn>')!)).toBe(true);
    expect(gemma.isControl(gemma.tokenId('<end_of_turn>')!)).toBe(true);
  });
});

describe('detokenization', () => {
  it.each(['llama-spm', 'phi-3', 'qwen2', 'qwen35', 'deepseek-coder', 'deepseek-llm'])(
    '%s: decode(encode(text)) === text on the vectors',
    async (name) => {
      const tok = await loadTokenizer(vocab(name));
      for (const c of readVectors(`${vocab(name)}.inp`)) expect(tok.decode(tok.encode(c.text))).toBe(c.text);
    },
  );

  it('applies clean_spaces like llama.cpp (gpt-2)', async () => {
    const tok = await loadTokenizer(vocab('gpt-2'));
    expect(tok.decode(tok.encode("Hello , world ! It ' s"))).toBe("Hello, world! It's");
  });

  it('renders or drops control tokens', async () => {
    const tok = await loadTokenizer(vocab('llama-bpe'));
    const ids = tok.encode('<|begin_of_text|>Hi', { parseSpecial: true });
    expect(tok.decode(ids)).toBe('Hi');
    expect(tok.decode(ids, { renderSpecial: true })).toBe('<|begin_of_text|>Hi');
    expect(tok.tokenText(128000)).toBe('<|begin_of_text|>');
    expect(new TextDecoder().decode(tok.tokenBytes(tok.encode(' the')[0]))).toBe(' the');
  });

  it('streams without splitting UTF-8 sequences across tokens', async () => {
    for (const name of ['llama-spm', 'gpt-2', 'qwen2']) {
      const tok = await loadTokenizer(vocab(name));
      const text = ' 🚀 (normal) 😶‍🌫️ Cyrillic: Привет, мир; Khmer: ស្វាគមន៍ 我想在apple工作';
      const ids = tok.encode(text);
      const dec = tok.createStreamDecoder();
      let out = '';
      for (const id of ids) {
        const piece = dec.push(id);
        expect(piece.includes('\ufffd'), `${name}: ${JSON.stringify(piece)}`).toBe(false);
        out += piece;
      }
      out += dec.flush();
      expect(out.trimStart()).toBe(text.trimStart()); // SPM's space prefix: the stream keeps it, decode() drops it
    }
  });
});

describe('metadata objects', () => {
  it('does not mutate the metadata it reads', async () => {
    const meta = await loadMetadata(vocab('llama-spm'));
    const before = (meta['tokenizer.ggml.tokens'] as string[]).length;
    createTokenizer(meta);
    expect((meta['tokenizer.ggml.tokens'] as string[]).length).toBe(before);
  });
});
