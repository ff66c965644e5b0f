/**
 * llama.cpp's digit-grouping scanner (`unicode_regex_split_custom_afmoe`), which it runs for the AFMoE marker regex
 * `\p{AFMoE_digits}` and for tiny_aya's `\d{1,3}(?=(?:\d{3})*\b)`: each run of `\p{N}` code points is cut into
 * groups of three counted from its end. Reproduced as llama.cpp does it, not as the regex reads: the text before a
 * run is not a piece of its own but joins the run's first group ("ab1234" → "ab1", "234"), any `\p{N}` counts (not
 * only ASCII digits, and no word boundary is checked), and the text after the last run stays one piece. Later
 * regexes of the same pre-tokenizer split those pieces further.
 */

import type { SplitPieces } from './regex-split.js';
import { CpFlag } from './unicode.js';

/** Splits each piece at its digit groups; returns the new piece lengths in code points. */
export function digitGroupScanner(p: SplitPieces): number[] {
  const out: number[] = [];
  const F = p.flags;
  let start = 0;
  for (const len of p.lengths) {
    const end = start + len;
    let prevEnd = start;
    const add = (e: number): void => {
      if (e > prevEnd) out.push(e - prevEnd);
      prevEnd = e;
    };
    let pos = start;
    while (pos < end) {
      if (!(F[pos] & CpFlag.Number)) {
        pos++;
        continue;
      }
      const runStart = pos;
      while (pos < end && F[pos] & CpFlag.Number) pos++;
      // The leading one or two digits (if the length is not a multiple of 3), then threes; the first piece cut also
      // takes whatever text came before the run.
      let cut = runStart + ((pos - runStart) % 3);
      if (cut > runStart) add(cut);
      for (; cut < pos; cut += 3) add(cut + 3);
    }
    add(end);
    start = end;
  }
  return out;
}
