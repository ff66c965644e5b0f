/**
 * Conformance with llama.cpp for the vocabulary types without llama.cpp test vectors (UGM/t5, gemma4, rwkv, plamo2):
 * the synthetic vocabularies of synthetic-vocabs.ts are rebuilt from their seed, checked against the sha256 the
 * reference was made from, and every recorded llama.cpp answer must match — token ids for each text with add_special
 * and parse_special off and on, every token's piece with and without special rendering, and detokenized texts.
 */

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseGguf } from '../../../src/gguf/parse.js';
import { MemoryByteSource } from '../../../src/io/byte-source.js';
import { createTokenizer } from '../../../src/tokenizer/index.js';
import type { VocabTokenizer } from '../../../src/tokenizer/vocab-tokenizer.js';
import { syntheticVocabGguf, syntheticVocabs } from './synthetic-vocabs.js';

interface Reference {
  sha256: string;
  cases: { text: string; addSpecial: boolean; parseSpecial: boolean; ids: number[] }[];
  pieces: [string, string][];
  detok: { ids: number[]; text: string; textSpecial: string }[];
}

const hex = (u8: Uint8Array): string => Buffer.from(u8).toString('hex');
const fromHex = (s: string): string => new TextDecoder('utf-8', { ignoreBOM: true }).decode(Buffer.from(s, 'hex'));

describe.each(syntheticVocabs().map((v) => [v.name, v] as const))('%s vs llama.cpp', (name, v) => {
  const ref = JSON.parse(
    readFileSync(new URL(`../../fixtures/tokenizers/${name}.json`, import.meta.url), 'utf8'),
  ) as Reference;
  const bytes = syntheticVocabGguf(v);
  let tok: VocabTokenizer | undefined;
  const load = async (): Promise<VocabTokenizer> => {
    tok ??= createTokenizer((await parseGguf(new MemoryByteSource(bytes))).metadata);
    return tok;
  };

  it('is built from the same GGUF the reference was made from', () => {
    const sha = createHash('sha256').update(bytes).digest('hex');
    expect(sha, 'the synthetic vocabulary drifted: regenerate with scripts/make-tokenizer-reference.ts').toBe(
      ref.sha256,
    );
    expect(ref.cases.length).toBe(v.cases.length);
  });

  it('tokenizes every case as llama.cpp does', async () => {
    const t = await load();
    const failures: string[] = [];
    for (const c of ref.cases) {
      const got = t.encode(c.text, { addSpecial: c.addSpecial, parseSpecial: c.parseSpecial });
      if (JSON.stringify(got) !== JSON.stringify(c.ids)) {
        failures.push(
          `${JSON.stringify(c.text)} add=${c.addSpecial} parse=${c.parseSpecial}\n   want ${c.ids.join(' ')}\n   got  ${got.join(' ')}`,
        );
      }
    }
    expect(failures, `${failures.length}/${ref.cases.length} cases differ:\n${failures.join('\n')}`).toEqual([]);
  });

  it("gives every token's piece as llama.cpp's token_to_piece", async () => {
    const t = await load();
    expect(ref.pieces.length).toBe(t.vocabSize);
    const failures: string[] = [];
    ref.pieces.forEach(([plain, special], id) => {
      const a = hex(t.tokenBytes(id));
      const b = hex(t.tokenBytes(id, { renderSpecial: true }));
      if (a !== plain || b !== special)
        failures.push(`${id} ${JSON.stringify(t.tokenText(id))}: want ${plain}/${special} got ${a}/${b}`);
    });
    expect(failures, failures.join('\n')).toEqual([]);
  });

  it("detokenizes as llama.cpp's detokenize", async () => {
    const t = await load();
    expect(ref.detok.length).toBeGreaterThan(0);
    for (const d of ref.detok) {
      expect(t.decode(d.ids), JSON.stringify(d.ids)).toBe(fromHex(d.text));
      expect(t.decode(d.ids, { renderSpecial: true }), JSON.stringify(d.ids)).toBe(fromHex(d.textSpecial));
    }
  });
});
