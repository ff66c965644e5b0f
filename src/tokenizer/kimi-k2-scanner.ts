/**
 * The Kimi K2 pre-tokenizer scanner (`tokenizer.ggml.pre = kimi-k2`). llama.cpp lists only `\p{Han}+` for it and
 * recognises that exact text to run a hand-written scanner of tiktoken's Kimi pattern (Han runs; words of non-Han
 * letters with an optional leading non-letter and an optional English contraction; digits in threes; punctuation
 * runs; whitespace), so this follows llama.cpp's scanner decision by decision (`unicode_regex_split_custom_kimi_k2`),
 * not the pattern's textbook meaning: combining marks are not letters here, and contractions are case-insensitive.
 */

import { contractionLength, type SplitPieces, whitespaceEnd } from './regex-split.js';
import { CpFlag } from './unicode.js';

/** Han ideographs as llama.cpp's `unicode_cpt_is_han` lists them (CJK unified, extensions A–F, compatibility). */
function isHan(cp: number): boolean {
  return (
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x20000 && cp <= 0x2ebef && !(cp >= 0x2a6e0 && cp <= 0x2a6ff)) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0x2f800 && cp <= 0x2fa1f)
  );
}

const CR = 0x0d;
const LF = 0x0a;

/** Splits each piece with Kimi K2's rules; returns the new piece lengths in code points. */
export function kimiK2Scanner(p: SplitPieces): number[] {
  const out: number[] = [];
  const C = p.cps;
  const F = p.flags;
  const WLN = CpFlag.Whitespace | CpFlag.Letter | CpFlag.Number;
  let start = 0;
  for (const len of p.lengths) {
    const ini = start;
    const end = start + len;
    start = end;
    // Past the piece a code point reads as -1 and its flags as 0 (llama.cpp's "out of range").
    const cpAt = (i: number): number => (i >= ini && i < end ? C[i] : -1);
    const flagsAt = (i: number): number => (i >= ini && i < end ? F[i] : 0);
    const nonHanLetter = (i: number): boolean => (flagsAt(i) & CpFlag.Letter) !== 0 && !isHan(cpAt(i));
    let prevEnd = ini;
    const add = (e: number): void => {
      if (e > prevEnd) out.push(e - prevEnd);
      prevEnd = e;
    };
    let pos = ini;
    while (pos < end) {
      const c = C[pos];
      const f = F[pos];
      // [\p{Han}]+
      if (isHan(c)) {
        while (isHan(cpAt(pos))) pos++;
        add(pos);
        continue;
      }
      // [^\r\n\p{L}\p{N}]? non-Han letters, then an optional contraction
      const leadable = !(c === CR || c === LF || f & CpFlag.Letter || f & CpFlag.Number);
      if (nonHanLetter(pos) || (leadable && nonHanLetter(pos + 1))) {
        if (leadable) pos++;
        while (nonHanLetter(pos)) pos++;
        pos += contractionLength(C, pos, end);
        add(pos);
        continue;
      }
      // \p{N}{1,3}
      if (f & CpFlag.Number) {
        let i0 = pos;
        while (flagsAt(pos) & CpFlag.Number) {
          if (++pos - i0 >= 3) {
            add(pos);
            i0 = pos;
          }
        }
        add(pos);
        continue;
      }
      // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
      let f2 = c === 0x20 ? flagsAt(pos + 1) : f;
      if (!(f2 & WLN) && f2 !== 0) {
        if (c === 0x20) pos++;
        while (!(f2 & WLN) && f2 !== 0) f2 = flagsAt(++pos);
        while (cpAt(pos) === CR || cpAt(pos) === LF) pos++;
        add(pos);
        continue;
      }
      // \s*[\r\n]+ | \s+(?!\S) | \s+
      pos = whitespaceEnd(C, F, pos, end);
      add(pos);
    }
  }
  return out;
}
