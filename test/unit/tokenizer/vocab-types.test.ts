/**
 * UGM (t5), gemma4, rwkv and plamo2 beyond the llama.cpp reference: malformed vocabularies and texts llama.cpp would
 * crash or hang on give `LlmError('tokenizer')`, long and hostile texts finish, streaming decode round-trips, and the
 * charsmap reader agrees with the builder the synthetic vocabularies use.
 */

import { describe, expect, it } from 'vitest';
import type { GgufValue } from '../../../src/gguf/types.js';
import { createTokenizer } from '../../../src/tokenizer/index.js';
import { ByteTrie } from '../../../src/tokenizer/byte-trie.js';
import { PrecompiledCharsmap } from '../../../src/tokenizer/precompiled-charsmap.js';
import { mulberry32 } from '../../helpers/mulberry32.js';
import { thrownLlmError } from '../../helpers/llm-error.js';
import { buildCharsmap } from './charsmap-builder.js';
import { syntheticVocabs } from './synthetic-vocabs.js';

type Meta = Record<string, GgufValue>;
const byName = (name: string): Meta => ({ ...syntheticVocabs().find((v) => v.name === name)!.metadata });
const hexByte = (b: number): string => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`;

describe('ByteTrie', () => {
  it('finds every key (later inserts win), and walks the deepest path for prefixes', () => {
    const rnd = mulberry32(7);
    const trie = new ByteTrie();
    const ref = new Map<string, number>();
    const keys: Uint8Array[] = [];
    for (let i = 0; i < 6000; i++) {
      // Few distinct bytes near the root and all 256 deeper: wide and narrow nodes, repeats.
      const k = Uint8Array.from(
        { length: 1 + Math.floor(rnd() * 6) },
        (_, j) => Math.floor(rnd() * (j === 0 ? 300 : 256)) & 0xff,
      );
      keys.push(k);
      trie.insert(k, i);
      ref.set(k.join(','), i);
    }
    for (const k of keys) {
      let node = 0;
      for (const b of k) node = node < 0 ? -1 : trie.child(node, b);
      expect(node >= 0 ? trie.value(node) : -2, k.join(',')).toBe(ref.get(k.join(',')));
      expect(trie.longestPath(Uint8Array.of(...k, 0xff, 0xfe), 0, k.length + 2)).toBeGreaterThanOrEqual(k.length);
    }
    expect(trie.child(0, 0x100)).toBe(-1);
    expect(() => trie.insert(Uint8Array.of(1), 1)).toThrow();
  });
});

describe('precompiled charsmap', () => {
  it('finds the longest key and its replacement, and nothing for other text', () => {
    const map = new PrecompiledCharsmap(
      buildCharsmap([
        ['a', 'x'],
        ['ab', 'yy'],
        ['abc', ''],
        ['東', 'east'],
      ]),
    );
    const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
    const dec = (u: Uint8Array): string => new TextDecoder().decode(u);
    expect(map.match(enc('a'), 0)).toMatchObject({ length: 1 });
    expect(dec(map.match(enc('abd'), 0)!.replacement)).toBe('yy');
    expect(map.match(enc('abcd'), 0)).toMatchObject({ length: 3, replacement: new Uint8Array(0) });
    expect(dec(map.match(enc('x東'), 1)!.replacement)).toBe('east');
    expect(map.match(enc('b'), 0)).toBeNull();
    expect(map.match(enc('\u0000a'), 0)).toBeNull();
  });

  it('refuses a charsmap that is too short or whose trie size is past its end', () => {
    for (const bad of [
      [1, 2, 3],
      [0xff, 0, 0, 0, 1, 2],
      [4, 0, 0, 0, 0, 0, 0, 0],
    ]) {
      const meta = { ...byName('synthetic-ugm'), 'tokenizer.ggml.precompiled_charsmap': bad };
      expect(thrownLlmError(() => createTokenizer(meta)).message).toMatch(/precompiled_charsmap' is malformed/);
    }
  });

  it('a trie that points outside itself fails the encode with LlmError, not a crash', () => {
    // One unit whose BASE sends the first byte far past the array.
    const bytes = [4, 0, 0, 0, 0, 0, 0x40, 0, 0x61, 0];
    const tok = createTokenizer({ ...byName('synthetic-ugm'), 'tokenizer.ggml.precompiled_charsmap': bytes });
    expect(thrownLlmError(() => tok.encode('abc')).message).toMatch(/charsmap is malformed/);
  });
});

describe('malformed vocabularies', () => {
  it('UGM text needing the unknown token when there is none', () => {
    // Two tokens: llama.cpp's default unknown id (2) is out of range, so the vocabulary has no unknown token.
    const tok = createTokenizer({
      'tokenizer.ggml.model': 't5',
      'tokenizer.ggml.tokens': ['<pad>', 'a'],
      'tokenizer.ggml.token_type': [3, 1],
      'tokenizer.ggml.scores': [0, -1],
    });
    expect(tok.encode('aa')).toEqual([1, 1]);
    expect(thrownLlmError(() => tok.encode('ab')).message).toMatch(/needs the unknown token/);
  });

  it('PLaMo-2 without every <0xXX> byte token', () => {
    const meta = byName('synthetic-plamo2');
    const tokens = [...(meta['tokenizer.ggml.tokens'] as string[])];
    tokens[tokens.indexOf(hexByte(0x41))] = 'not a byte';
    expect(thrownLlmError(() => createTokenizer({ ...meta, 'tokenizer.ggml.tokens': tokens })).message).toMatch(
      /<0x41> is missing/,
    );
  });

  it('gemma4 without merges', () => {
    const meta = byName('synthetic-gemma4');
    delete meta['tokenizer.ggml.merges'];
    expect(thrownLlmError(() => createTokenizer(meta)).message).toMatch(/merges' is missing/);
  });

  it('RWKV byte with no token and no unknown token', () => {
    const meta = byName('synthetic-rwkv');
    delete meta['tokenizer.ggml.unknown_token_id'];
    const tok = createTokenizer(meta);
    expect(tok.encode('abc').length).toBeGreaterThan(0);
    expect(thrownLlmError(() => tok.encode('a~b')).message).toMatch(/0x7e starts no RWKV token/);
  });

  it('RWKV byte that only starts longer tokens is unknown, where llama.cpp would loop forever', () => {
    const meta = byName('synthetic-rwkv');
    const tokens = [...(meta['tokenizer.ggml.tokens'] as string[]), '~~'];
    const types = [...(meta['tokenizer.ggml.token_type'] as number[]), 1];
    const scores = [...(meta['tokenizer.ggml.scores'] as number[]), 0];
    const tok = createTokenizer({
      ...meta,
      'tokenizer.ggml.tokens': tokens,
      'tokenizer.ggml.token_type': types,
      'tokenizer.ggml.scores': scores,
    });
    const tilde2 = tokens.length - 1;
    expect(tok.encode('~~~')).toEqual([tilde2, 0]);
  });
});

describe('BOS/EOS flags', () => {
  it('report what encode adds: RWKV and PLaMo-2 never add BOS/EOS, whatever the file says', () => {
    const plamo = createTokenizer(byName('synthetic-plamo2'));
    expect(plamo.vocab.addBos).toBe(true); // tokenizer.ggml.add_bos_token in the file
    expect(plamo.addBos).toBe(false);
    expect(plamo.encode('the', { addSpecial: true })).toEqual(plamo.encode('the'));
    const ugm = createTokenizer(byName('synthetic-ugm'));
    expect([ugm.addBos, ugm.addEos]).toEqual([false, true]); // UGM defaults
    expect(ugm.encode('the', { addSpecial: true })).toEqual([...ugm.encode('the'), 1]);
    const gemma = createTokenizer(byName('synthetic-gemma4'));
    expect(gemma.addBos).toBe(true); // forced on for Gemma 4 although the file says false
    expect(gemma.encode('the', { addSpecial: true })[0]).toBe(2);
  });
});

describe.each(syntheticVocabs().map((v) => [v.name, v] as const))('%s', (_name, v) => {
  const tok = createTokenizer(v.metadata);

  it('finishes long and hostile texts', () => {
    const parts = ['the quick brown fox ', '東京タワー', '😀', '\u200b', '  \n\n\t', 'ﬁ', '~', '\u0000', '\ud800', 'é'];
    let text = '';
    for (let i = 0; text.length < 200_000; i++) text += parts[(i * 7) % parts.length];
    const t0 = Date.now();
    const ids = tok.encode(text, { addSpecial: true, parseSpecial: true });
    expect(ids.length).toBeGreaterThan(1000);
    expect(Date.now() - t0).toBeLessThan(30_000); // a hang bound, not a speed check
    for (const id of ids) expect(id >= 0 && id < tok.vocabSize).toBe(true);
  });

  it('streams the same text as a whole decode', () => {
    for (const c of v.cases.filter((x) => x.addSpecial)) {
      const ids = tok.encode(c.text, c);
      const whole = new TextDecoder('utf-8', { ignoreBOM: true }).decode(
        Uint8Array.from(ids.flatMap((id) => [...tok.tokenBytes(id)])),
      );
      const s = tok.createStreamDecoder();
      let streamed = '';
      for (const id of ids) streamed += s.push(id);
      streamed += s.flush();
      expect(streamed).toBe(whole);
    }
  });
});
