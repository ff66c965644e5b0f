/**
 * The twelve BPE pre-tokenizer names webgguf refused before ("unknown pre-tokenizer") although llama.cpp knows them:
 * afmoe, cohere2moe, exaone-moe, jais-2, kimi-k2, laguna, minicpm5, spark2_5, superbpe, tiny_aya, ufakzeka, youtu.
 * llama.cpp's ids and detokenized text of the shared qwen2 and llama-bpe vocabularies re-labelled with each name (the
 * metadata edited at test time; for one Kimi K2 set the merges dropped too, as tiktoken-converted Kimi files come) in
 * test/fixtures/tokenizers/pre-tokenizer-names.json: the cases where the name's ids differ from the vocabulary's own
 * pre-tokenizer (digit grouping from the end, Han / kana / Hangul / Thai runs, cased words collapsed, superwords,
 * whitespace cascades, contractions kept or dropped) and clean_spaces in detokenization. Their rows live in the lazy
 * tokenizer chunk, which `loadTokenizer` awaits.
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import type { GgufValue } from '../../../src/gguf/types.js';
import { loadTokenizer } from '../../../src/tokenizer/index.js';
import { sharedPath } from '../../helpers/shared-path.js';
import { loadMetadata } from './vocab-fixtures.js';

interface RecordedSet {
  readonly vocab: string;
  readonly pre: string;
  readonly dropMerges?: boolean;
  readonly cases: readonly { readonly text: string; readonly parseSpecial: boolean; readonly ids: number[] }[];
  readonly detok: readonly { readonly ids: number[]; readonly text: string }[];
}

const recorded = JSON.parse(
  readFileSync(new URL('../../fixtures/tokenizers/pre-tokenizer-names.json', import.meta.url), 'utf8'),
) as { readonly sets: readonly RecordedSet[] };

async function relabelled(set: RecordedSet): Promise<Record<string, GgufValue>> {
  const meta: Record<string, GgufValue> = {
    ...(await loadMetadata(sharedPath('tokenizer-vectors', set.vocab))),
    'tokenizer.ggml.pre': set.pre,
  };
  if (set.dropMerges) delete meta['tokenizer.ggml.merges'];
  return meta;
}

describe('pre-tokenizer names llama.cpp knows', () => {
  it('needs the lazy chunk: createTokenizer refuses before it loads, loadTokenizer loads it', async () => {
    const set = recorded.sets[0];
    vi.resetModules(); // a fresh module graph, as a page has before anything loaded the chunk
    const fresh = await import('../../../src/tokenizer/index.js');
    const meta = await relabelled(set);
    expect(() => fresh.createTokenizer(meta)).toThrow(/lazy tokenizer chunk.*loadTokenizer/);
    const tk = await fresh.loadTokenizer(meta);
    expect(tk.encode(set.cases[0].text)).toEqual(set.cases[0].ids);
  });

  for (const set of recorded.sets) {
    const label = `${set.pre} on ${set.vocab}${set.dropMerges ? ' without merges' : ''}`;
    it(`${label}: llama.cpp's ids and detokenized text`, async () => {
      const tk = await loadTokenizer(await relabelled(set));
      for (const c of set.cases) {
        const opts = { addSpecial: c.parseSpecial, parseSpecial: c.parseSpecial };
        expect(tk.encode(c.text, opts), JSON.stringify(c.text)).toEqual(c.ids);
      }
      for (const d of set.detok) expect(tk.decode(d.ids), JSON.stringify(d.ids)).toBe(d.text);
    });
  }

  it('still refuses a name llama.cpp does not know, and merges stay required for other names', async () => {
    const meta = await relabelled({ vocab: 'ggml-vocab-qwen2.gguf', pre: 'no-such-pre', cases: [], detok: [] });
    await expect(loadTokenizer(meta)).rejects.toThrow(/unknown pre-tokenizer/);
    const noMerges = await relabelled({
      vocab: 'ggml-vocab-qwen2.gguf',
      pre: 'laguna',
      dropMerges: true,
      cases: [],
      detok: [],
    });
    await expect(loadTokenizer(noMerges)).rejects.toThrow(/merges/);
  });
});
