/**
 * Splits text into raw-text fragments and special tokens before the tokenizer algorithm runs (llama.cpp
 * `tokenizer_st_partition`). Special tokens are tried longest first; user-defined tokens are always split out, control
 * and unknown tokens only with `parseSpecial`. LSTRIP/RSTRIP attributes eat the whitespace beside a match.
 */

import { TokenAttr, type Vocab } from './vocab.js';

/** A piece of the input: raw text `text.slice(start, end)`, or one special token. */
export type Fragment =
  | { readonly kind: 'text'; readonly start: number; readonly end: number }
  | { readonly kind: 'token'; readonly id: number };

/** C `isspace` on one UTF-16 unit (space, \t, \n, \v, \f, \r). */
function isCSpace(c: number): boolean {
  return c === 0x20 || (c >= 0x09 && c <= 0x0d);
}

/** Splits `text` (well-formed) into fragments, in order. An empty text gives no fragments. */
export function partitionSpecial(vocab: Vocab, text: string, parseSpecial: boolean): Fragment[] {
  if (text.length === 0) return [];
  let frags: Fragment[] = [{ kind: 'text', start: 0, end: text.length }];
  for (const id of vocab.specialTokens) {
    const attr = vocab.attrs[id];
    if (!parseSpecial && attr & (TokenAttr.Control | TokenAttr.Unknown)) continue;
    const tok = vocab.tokens[id];
    // Cheap presence test over the whole text first: most special tokens never occur.
    if (!text.includes(tok)) continue;
    // Fragments come in text order, so the last search result answers later searches until it is passed: each token
    // costs one linear scan of the text, however many fragments there are.
    let cacheFrom = -1;
    let cacheAt = -1;
    const find = (from: number): number => {
      if (cacheFrom < 0 || from < cacheFrom || (cacheAt >= 0 && cacheAt < from)) {
        cacheFrom = from;
        cacheAt = text.indexOf(tok, from);
      }
      return cacheAt;
    };
    const next: Fragment[] = [];
    for (const f of frags) {
      if (f.kind !== 'text') {
        next.push(f);
        continue;
      }
      let start = f.start;
      const end = f.end;
      for (;;) {
        const at = find(start);
        if (at < 0 || at + tok.length > end) {
          if (start < end) next.push({ kind: 'text', start, end });
          break;
        }
        let leftEnd = at;
        if (attr & TokenAttr.Lstrip) while (leftEnd > start && isCSpace(text.charCodeAt(leftEnd - 1))) leftEnd--;
        if (leftEnd > start) next.push({ kind: 'text', start, end: leftEnd });
        next.push({ kind: 'token', id });
        start = at + tok.length;
        if (attr & TokenAttr.Rstrip) while (start < end && isCSpace(text.charCodeAt(start))) start++;
      }
    }
    frags = next;
  }
  return frags;
}
