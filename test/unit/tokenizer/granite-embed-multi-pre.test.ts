/**
 * The `granite-embed-multi-97m` pre-tokenizer (granite-embedding-97m-multilingual; llama.cpp
 * LLAMA_VOCAB_PRE_TYPE_GRANITE_EMB_MULTI): GPT-4o's split with `[\p{L}\p{M}]` lookaheads so combining marks stay with
 * their letters, whole-word vocabulary hits before merges and no space clean-up (llama.cpp: ignore_merges, clean_spaces off). llama.cpp's ids of the
 * shared qwen2 vocabulary re-labelled with that pre-tokenizer (the metadata edited at test time) in
 * test/fixtures/tokenizers/granite-embed-multi-pre.json.
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createTokenizer } from '../../../src/tokenizer/index.js';
import { sharedPath } from '../../helpers/shared-path.js';
import { loadMetadata } from './vocab-fixtures.js';

interface Recorded {
  readonly vocab: string;
  readonly pre: string;
  readonly cases: readonly { readonly text: string; readonly ids: number[] }[];
}

const recorded = JSON.parse(
  readFileSync(new URL('../../fixtures/tokenizers/granite-embed-multi-pre.json', import.meta.url), 'utf8'),
) as Recorded;

describe('granite-embed-multi-97m pre-tokenizer', () => {
  it("matches llama.cpp's ids (combining marks, Thai vowels, contractions after a mark)", async () => {
    const meta = await loadMetadata(sharedPath('tokenizer-vectors', recorded.vocab));
    const tk = createTokenizer({ ...meta, 'tokenizer.ggml.pre': recorded.pre });
    for (const c of recorded.cases) {
      expect(tk.encode(c.text, { addSpecial: false, parseSpecial: false }), JSON.stringify(c.text)).toEqual(c.ids);
    }
  });
});
