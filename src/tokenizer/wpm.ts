/**
 * WordPiece (`tokenizer.ggml.model = bert`), as llama.cpp's `llm_tokenizer_wpm_session`: BERT normalization (lower-case
 * and accent stripping by default), split on whitespace and around punctuation, ASCII symbols and CJK ideographs, then
 * greedy longest-match of each word prefixed with '▁' (llama.cpp stores word-initial pieces with '▁' and continuation
 * pieces bare). A word that cannot be covered becomes the unknown token.
 */

import { CpFlag, cpFlags, cpNfdFirst, cpToLower, toCodepoints, utf8Length } from './unicode.js';
import type { Vocab } from './vocab.js';

/** CJK ideograph ranges BERT splits one by one (HF tokenizers' table, including its 0x2B920 quirk). */
function isChineseChar(cp: number): boolean {
  return (
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x20000 && cp <= 0x2a6df) ||
    (cp >= 0x2a700 && cp <= 0x2b73f) ||
    (cp >= 0x2b740 && cp <= 0x2b81f) ||
    (cp >= 0x2b920 && cp <= 0x2ceaf) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0x2f800 && cp <= 0x2fa1f)
  );
}

/** Encodes raw text (no special tokens) with a WordPiece vocabulary. */
export class WpmEncoder {
  constructor(private readonly vocab: Vocab) {}

  /** BERT pre-processing: normalized words (llama.cpp `preprocess`). */
  words(text: string): string[] {
    const { lowercase, stripAccents } = this.vocab;
    const words: string[] = [''];
    for (let cp of toCodepoints(text)) {
      if (stripAccents) cp = cpNfdFirst(cp);
      const f = cpFlags(cp);
      if (f & CpFlag.Whitespace) {
        if (words[words.length - 1] !== '') words.push('');
        continue;
      }
      if (cp === 0 || cp === 0xfffd || f & CpFlag.Control) continue;
      if (stripAccents && f & CpFlag.AccentMark) continue;
      const s = String.fromCodePoint(lowercase ? cpToLower(cp) : cp);
      if (f & CpFlag.Punctuation || (cp < 0x7f && f & CpFlag.Symbol) || isChineseChar(cp)) {
        if (words[words.length - 1] !== '') words.push('');
        words[words.length - 1] = s;
        words.push('');
      } else {
        words[words.length - 1] += s;
      }
    }
    if (words[words.length - 1] === '') words.pop();
    return words;
  }

  /** Appends the ids of `text` to `out`. */
  encode(text: string, out: number[]): void {
    const maxBytes = this.vocab.maxTokenBytes;
    for (const word of this.words(text)) {
      if (word.length === 0) continue;
      const w = '\u2581' + word;
      // Code-unit offsets of code-point boundaries and the UTF-8 byte offset at each.
      const cps = toCodepoints(w);
      const cuAt = new Int32Array(cps.length + 1);
      const byteAt = new Int32Array(cps.length + 1);
      for (let i = 0; i < cps.length; i++) {
        cuAt[i + 1] = cuAt[i] + (cps[i] > 0xffff ? 2 : 1);
        byteAt[i + 1] = byteAt[i] + utf8Length(cps[i]);
      }
      const before = out.length;
      for (let i = 0; i < cps.length; ) {
        let matched = -1;
        // Longest candidate first; a token has at most maxBytes bytes, so at most that many code points.
        let j0 = Math.min(cps.length, i + maxBytes + 1);
        while (byteAt[j0] - byteAt[i] > maxBytes + 1) j0--;
        for (let j = j0; j > i; j--) {
          const id = this.vocab.id(w.slice(cuAt[i], cuAt[j]));
          if (id !== undefined) {
            out.push(id);
            matched = j;
            break;
          }
        }
        if (matched < 0) {
          out.length = before;
          break;
        }
        i = matched;
      }
      if (out.length === before && this.vocab.unkId !== null) out.push(this.vocab.unkId);
    }
  }
}
