/**
 * Code points unassigned in Unicode 15.1 — the version of llama.cpp's `unicode-data.cpp` table — are "undefined" for
 * the tokenizers (not control, not a letter) whatever newer Unicode the JS engine ships: WPM keeps them inside the
 * word (llama.cpp: one [UNK] for the word) instead of dropping them as control characters, and the BPE
 * pre-tokenizers do not take a later-assigned letter for a letter. llama.cpp's ids in
 * test/fixtures/tokenizers/unicode-15-1-unassigned.json (recorded from the oracle on ../shared vocabularies).
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CpFlag, cpFlags, cpToLower } from '../../../src/tokenizer/unicode.js';
import { unassignedInUnicode151 } from '../../../src/tokenizer/unicode-15-1-unassigned.js';
import { sharedPath } from '../../helpers/shared-path.js';
import { loadTokenizer } from './vocab-fixtures.js';

interface Recorded {
  readonly vocabs: readonly { readonly file: string; readonly cases: readonly { text: string; ids: number[] }[] }[];
}

const recorded = JSON.parse(
  readFileSync(new URL('../../fixtures/tokenizers/unicode-15-1-unassigned.json', import.meta.url), 'utf8'),
) as Recorded;

describe('Unicode 15.1 code point classes (llama.cpp unicode-data.cpp)', () => {
  it('classifies unassigned and later-assigned code points as undefined, assigned ones by category', () => {
    // U+1420E (Egyptian hieroglyph, Unicode 16), U+10D50 (Garay capital, 16), U+1C89 (Cyrillic, 16), U+1B9E4 and
    // U+1FFD8 (unassigned), U+0378 (unassigned in the BMP).
    for (const cp of [0x1420e, 0x10d50, 0x1c89, 0x1b9e4, 0x1ffd8, 0x0378]) {
      expect(cpFlags(cp), cp.toString(16)).toBe(CpFlag.Undefined);
      expect(unassignedInUnicode151(cp), cp.toString(16)).toBe(true);
    }
    expect(cpToLower(0x10d50)).toBe(0x10d50); // no case mapping in llama.cpp's table
    // Assigned by 15.1: U+2FFC (symbol, 15.1), U+11F00 (Kawi mark, 15.0), U+0016 (control), U+064A (letter).
    expect(cpFlags(0x2ffc) & CpFlag.Categories).toBe(CpFlag.Symbol);
    expect(cpFlags(0x11f00) & CpFlag.Categories).toBe(CpFlag.AccentMark);
    expect(cpFlags(0x16) & CpFlag.Categories).toBe(CpFlag.Control);
    expect(cpFlags(0x64a) & CpFlag.Categories).toBe(CpFlag.Letter);
    expect(unassignedInUnicode151(0x10ffff)).toBe(true);
    expect(unassignedInUnicode151(0x10fffd)).toBe(false); // private use
  });

  for (const vocab of recorded.vocabs) {
    it(`matches llama.cpp's ids on ${vocab.file}`, async () => {
      const tk = await loadTokenizer(sharedPath('tokenizer-vectors', vocab.file));
      for (const c of vocab.cases) {
        expect(tk.encode(c.text, { addSpecial: false, parseSpecial: false }), JSON.stringify(c.text)).toEqual(c.ids);
      }
    });
  }
});
