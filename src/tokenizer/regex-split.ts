/**
 * Splits text into pre-tokens exactly as llama.cpp's `unicode_regex_split` does. Each regex splits the pieces left by
 * the previous one; text a regex does not match stays as its own piece, and an empty match cuts where it stands.
 * Three engines, chosen per regex as llama.cpp chooses: hand-written scanners for the regexes it recognises by their
 * text (GPT-2, Llama 3, Kimi K2's `\p{Han}+`, the AFMoE / tiny_aya digit groups); for regexes with `\p{…}` classes,
 * a "collapsed" string (one character per code point, non-ASCII code points replaced by a stand-in for their
 * category) matched with the class rewritten to those stand-ins; otherwise a code-point regex with non-ASCII
 * whitespace as U+000B.
 * The engine's Unicode property support (`\p{…}` with the `u` flag) supplies the categories; there are no ASCII
 * shortcuts.
 */

import { LlmError } from '../errors.js';
import { RE_GPT2, RE_LLAMA3, RE_LLAMA3_ORIGINAL } from './pre-tokenizers.js';
import { CpFlag, cpToLower, fillFlags } from './unicode.js';

/** Pre-tokenized text: `cps` code points, split into consecutive runs of `lengths[i]` code points. */
export interface SplitPieces {
  /** The text's code points. Shape: (n,) u32 */
  readonly cps: Uint32Array;
  /** `cpFlags` of each code point. Shape: (n,) u16 */
  readonly flags: Uint16Array;
  /** Current piece lengths in code points (sum n). */
  lengths: number[];
}

type Pieces = SplitPieces;
/** Splits every current piece; returns the new piece lengths in code points. */
type Engine = (p: SplitPieces) => number[];

const CATEGORY_CLASSES: ReadonlyArray<[string, number, string]> = [
  // [\p{…} text, stand-in char code, the ASCII members llama.cpp lists for that category]
  ['\\p{N}', 0xd1, '0-9'],
  ['\\p{L}', 0xd2, 'A-Za-z'],
  ['\\p{Lu}', 0xd2, 'A-Za-z'],
  ['\\p{Ll}', 0xd2, 'A-Za-z'],
  ['\\p{Lt}', 0xd2, 'A-Za-z'],
  ['\\p{Lm}', 0xd2, 'A-Za-z'],
  ['\\p{Lo}', 0xd2, 'A-Za-z'],
  ['\\p{P}', 0xd3, '!-#%-*,-/:-;?-@\\[-\\]_\\{\\}'],
  ['\\p{M}', 0xd4, ''],
  ['\\p{S}', 0xd5, '\\$\\+<->\\^`\\|'],
];

/** Stand-in of each category in the collapsed string (llama.cpp `k_ucat_cpt`; 0xD0 = other). */
function collapsedChar(cp: number, flags: number): number {
  if (cp < 0x80) return cp;
  if (flags & CpFlag.Whitespace) return 0x0b;
  switch (flags & CpFlag.Categories) {
    case CpFlag.Number:
      return 0xd1;
    case CpFlag.Letter:
      return 0xd2;
    case CpFlag.Punctuation:
      return 0xd3;
    case CpFlag.AccentMark:
      return 0xd4;
    case CpFlag.Symbol:
      return 0xd5;
    default:
      return 0xd0;
  }
}

function usesCategories(regex: string): boolean {
  return CATEGORY_CLASSES.some(([name]) => regex.includes(name));
}

/** `\s` as C's `isspace` sees it (std::regex in the "C" locale), never U+FEFF as JS's `\s` would. */
function rewriteWhitespace(src: string, inside: boolean, i: number): [string, number] | null {
  if (src[i] !== '\\') return null;
  if (src[i + 1] === 's') return [inside ? '\\t-\\r ' : '[\\t-\\r ]', i + 1];
  if (src[i + 1] === 'S' && !inside) return ['[^\\t-\\r ]', i + 1];
  return null;
}

/** Rewrites a llama.cpp regex for the collapsed string (llama.cpp's own rewrite, plus the `\s` fix above). */
function collapseRegex(src: string): string {
  let out = '';
  let inside = false;
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === '[' && (i === 0 || src[i - 1] !== '\\')) {
      out += '[';
      inside = true;
      continue;
    }
    if (inside && c === ']' && src[i - 1] !== '\\') {
      out += ']';
      inside = false;
      continue;
    }
    const cls = CATEGORY_CLASSES.find(([name]) => src.startsWith(name, i));
    if (cls) {
      const body = `\\x${cls[1].toString(16)}${cls[2]}`;
      out += inside ? body : `[${body}]`;
      i += cls[0].length - 1;
      continue;
    }
    const ws = rewriteWhitespace(src, inside, i);
    if (ws) {
      out += ws[0];
      i = ws[1];
      continue;
    }
    out += c;
  }
  return out;
}

function plainRegex(src: string): string {
  let out = '';
  let inside = false;
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === '[' && (i === 0 || src[i - 1] !== '\\')) inside = true;
    else if (inside && c === ']' && src[i - 1] !== '\\') inside = false;
    const ws = rewriteWhitespace(src, inside, i);
    if (ws) {
      out += ws[0];
      i = ws[1];
      continue;
    }
    out += c;
  }
  return out;
}

/**
 * Runs `re` over each current piece of `text` and returns the new piece lengths in code points: matches and the
 * unmatched text between them. `cuIndex` maps code-point index → UTF-16 offset; null when `text` has one unit per
 * code point (the collapsed string).
 */
function splitWithRegex(p: Pieces, re: RegExp, text: string, cuIndex: Int32Array | null): number[] {
  const out: number[] = [];
  let startCp = 0;
  for (const len of p.lengths) {
    const a = cuIndex ? cuIndex[startCp] : startCp;
    const b = cuIndex ? cuIndex[startCp + len] : startCp + len;
    const chunk = text.slice(a, b);
    re.lastIndex = 0;
    let prevCp = 0; // code points consumed so far within the chunk
    let prevCu = 0;
    let m: RegExpExecArray | null;
    while ((m = re.exec(chunk)) !== null) {
      const posCp = cuIndex ? countCp(chunk, prevCu, m.index) + prevCp : m.index;
      if (m[0].length === 0) {
        // An empty match (superbpe's `(?=(\d{3})+(?!\d))`) still cuts the piece where it matched, as std::regex's
        // iterator reports it; the search goes on one code point further.
        if (posCp > prevCp) out.push(posCp - prevCp);
        prevCp = posCp;
        prevCu = m.index;
        const c = chunk.charCodeAt(m.index);
        re.lastIndex = m.index + (cuIndex && c >= 0xd800 && c <= 0xdbff ? 2 : 1);
        continue;
      }
      const lenCp = cuIndex ? countCp(chunk, m.index, m.index + m[0].length) : m[0].length;
      if (posCp > prevCp) out.push(posCp - prevCp);
      out.push(lenCp);
      prevCp = posCp + lenCp;
      prevCu = m.index + m[0].length;
    }
    if (prevCp < len) out.push(len - prevCp);
    startCp += len;
  }
  return out;
}

function countCp(s: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xdc00 || c > 0xdfff) n++;
  }
  return n;
}

function collapsedEngine(src: string): Engine {
  const re = new RegExp(collapseRegex(src), 'g');
  return (p) => {
    const codes = new Uint16Array(p.cps.length);
    for (let i = 0; i < p.cps.length; i++) codes[i] = collapsedChar(p.cps[i], p.flags[i]);
    return splitWithRegex(p, re, decodeUnits(codes), null);
  };
}

function plainEngine(src: string): Engine {
  const re = new RegExp(plainRegex(src), 'gu');
  return (p) => {
    const cuIndex = new Int32Array(p.cps.length + 1);
    const parts: string[] = [];
    let cu = 0;
    for (let i = 0; i < p.cps.length; i++) {
      cuIndex[i] = cu;
      const cp = p.cps[i] > 0x7f && p.flags[i] & CpFlag.Whitespace ? 0x0b : p.cps[i];
      const ch = String.fromCodePoint(cp);
      parts.push(ch);
      cu += ch.length;
    }
    cuIndex[p.cps.length] = cu;
    return splitWithRegex(p, re, parts.join(''), cuIndex);
  };
}

function decodeUnits(codes: Uint16Array): string {
  let s = '';
  const CHUNK = 8192;
  for (let i = 0; i < codes.length; i += CHUNK) {
    s += String.fromCharCode(...codes.subarray(i, Math.min(codes.length, i + CHUNK)));
  }
  return s;
}

/** Scanner for GPT-2's regex (llama.cpp `unicode_regex_split_custom_gpt2`, same decisions in the same order). */
function gpt2Engine(p: Pieces): number[] {
  const out: number[] = [];
  const C = p.cps;
  const F = p.flags;
  const WLN = CpFlag.Whitespace | CpFlag.Letter | CpFlag.Number;
  let start = 0;
  for (const len of p.lengths) {
    const ini = start;
    const end = start + len;
    start = end;
    // Positions never go below `ini`; past `end` a code point reads as -1 and its flags as 0 ("out of range").
    let prevEnd = ini;
    let pos = ini;
    while (pos < end) {
      const c = C[pos];
      const f = F[pos];
      if (c === 0x27 && pos + 1 < end) {
        const n1 = C[pos + 1];
        if (n1 === 0x73 || n1 === 0x74 || n1 === 0x6d || n1 === 0x64) {
          pos += 2;
          out.push(pos - prevEnd);
          prevEnd = pos;
          continue;
        }
        if (pos + 2 < end) {
          const n2 = C[pos + 2];
          if ((n1 === 0x72 && n2 === 0x65) || (n1 === 0x76 && n2 === 0x65) || (n1 === 0x6c && n2 === 0x6c)) {
            pos += 3;
            out.push(pos - prevEnd);
            prevEnd = pos;
            continue;
          }
        }
      }
      let f2 = c === 0x20 ? (pos + 1 < end ? F[pos + 1] : 0) : f;
      if (f2 & CpFlag.Letter || f2 & CpFlag.Number || (!(f2 & WLN) && f2 !== 0)) {
        // ` ?\p{L}+`, ` ?\p{N}+` or ` ?[^\s\p{L}\p{N}]+`: the class is decided by the first character.
        const cls = f2 & CpFlag.Letter ? 1 : f2 & CpFlag.Number ? 2 : 3;
        if (c === 0x20) pos++;
        for (;;) {
          const inClass =
            cls === 1 ? (f2 & CpFlag.Letter) !== 0 : cls === 2 ? (f2 & CpFlag.Number) !== 0 : !(f2 & WLN) && f2 !== 0;
          if (!inClass) break;
          pos++;
          f2 = pos < end ? F[pos] : 0;
        }
        if (pos > prevEnd) out.push(pos - prevEnd);
        prevEnd = pos;
        continue;
      }
      let nWs = 0;
      while (pos + nWs < end && F[pos + nWs] & CpFlag.Whitespace) nWs++;
      if (nWs > 1 && pos + nWs < end)
        pos += nWs - 1; // \s+(?!\S): leave the last space to the next word
      else if (nWs > 0) pos += nWs;
      else pos++;
      if (pos > prevEnd) out.push(pos - prevEnd);
      prevEnd = pos;
    }
  }
  return out;
}

/**
 * Length of the English contraction (`'s 't 'm 'd 're 've 'll`, any case) starting at `pos` of the piece ending at
 * `end`, or 0: the case-insensitive alternative of llama.cpp's Llama 3 and Kimi K2 scanners.
 */
export function contractionLength(C: Uint32Array, pos: number, end: number): number {
  if (pos + 1 >= end || C[pos] !== 0x27) return 0;
  const n1 = cpToLower(C[pos + 1]);
  if (n1 === 0x73 || n1 === 0x74 || n1 === 0x6d || n1 === 0x64) return 2;
  if (pos + 2 >= end) return 0;
  const n2 = cpToLower(C[pos + 2]);
  return (n1 === 0x72 && n2 === 0x65) || (n1 === 0x76 && n2 === 0x65) || (n1 === 0x6c && n2 === 0x6c) ? 3 : 0;
}

/**
 * The end of the whitespace pre-token at `pos` (`\s*[\r\n]+ | \s+(?!\S) | \s+`, one code point when none matches)
 * in the piece ending at `end`: the last alternatives of llama.cpp's Llama 3 and Kimi K2 scanners.
 */
export function whitespaceEnd(C: Uint32Array, F: Uint16Array, pos: number, end: number): number {
  let nWs = 0;
  let lastRN = 0;
  while (pos + nWs < end && F[pos + nWs] & CpFlag.Whitespace) {
    const c2 = C[pos + nWs];
    if (c2 === 0x0d || c2 === 0x0a) lastRN = pos + nWs + 1;
    nWs++;
  }
  if (lastRN > 0) return lastRN;
  if (nWs > 1 && pos + nWs < end) return pos + nWs - 1;
  return pos + Math.max(nWs, 1);
}

/** Scanner for Llama 3's regex (llama.cpp `unicode_regex_split_custom_llama3`). */
function llama3Engine(p: Pieces): number[] {
  const out: number[] = [];
  const C = p.cps;
  const F = p.flags;
  const WLN = CpFlag.Whitespace | CpFlag.Letter | CpFlag.Number;
  let start = 0;
  for (const len of p.lengths) {
    const ini = start;
    const end = start + len;
    start = end;
    let prevEnd = ini;
    const add = (e: number): void => {
      if (e > prevEnd) out.push(e - prevEnd);
      prevEnd = e;
    };
    let pos = ini;
    while (pos < end) {
      const c = C[pos];
      const f = F[pos];
      const contraction = contractionLength(C, pos, end);
      if (contraction > 0) {
        pos += contraction;
        add(pos);
        continue;
      }
      // [^\r\n\p{L}\p{N}]?\p{L}+
      if (!(c === 0x0d || c === 0x0a || f & CpFlag.Number)) {
        if (f & CpFlag.Letter || (pos + 1 < end && F[pos + 1] & CpFlag.Letter)) {
          pos++;
          while (pos < end && F[pos] & CpFlag.Letter) pos++;
          add(pos);
          continue;
        }
      }
      // \p{N}{1,3}
      if (f & CpFlag.Number) {
        let i0 = pos;
        while (pos < end && F[pos] & CpFlag.Number) {
          if (++pos - i0 >= 3) {
            add(pos);
            i0 = pos;
          }
        }
        add(pos);
        continue;
      }
      // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
      let f2 = c === 0x20 ? (pos + 1 < end ? F[pos + 1] : 0) : f;
      if (!(f2 & WLN) && f !== 0) {
        if (c === 0x20) pos++;
        while (!(f2 & WLN) && f2 !== 0) {
          pos++;
          f2 = pos < end ? F[pos] : 0;
        }
        while (pos < end && (C[pos] === 0x0d || C[pos] === 0x0a)) pos++;
        add(pos);
        continue;
      }
      pos = whitespaceEnd(C, F, pos, end);
      add(pos);
    }
  }
  return out;
}

/** Regexes llama.cpp recognises by their exact text and runs a hand-written scanner for instead. */
const SCANNERS = new Map<string, Engine>([
  [RE_GPT2, gpt2Engine],
  [RE_LLAMA3, llama3Engine],
  [RE_LLAMA3_ORIGINAL, llama3Engine],
]);

/** Adds scanners keyed by regex text (the lazy chunk's: Kimi K2, digit groups). */
export function registerSplitScanners(entries: readonly (readonly [string, Engine])[]): void {
  for (const [regex, scanner] of entries) SCANNERS.set(regex, scanner);
}

function compileEngine(src: string): Engine {
  const scanner = SCANNERS.get(src);
  if (scanner) return scanner;
  try {
    return usesCategories(src) ? collapsedEngine(src) : plainEngine(src);
  } catch (e) {
    throw new LlmError('tokenizer', `compiling pre-tokenizer regex '${src}' failed: ${(e as Error).message}`, {
      cause: e,
    });
  }
}

/** A compiled sequence of split regexes. */
export class RegexSplitter {
  private readonly engines: readonly Engine[];

  constructor(regexes: readonly string[]) {
    this.engines = regexes.map(compileEngine);
  }

  /** Splits code points `cps` into pre-tokens; returns their lengths in code points (summing to `cps.length`). */
  split(cps: Uint32Array): number[] {
    const flags = new Uint16Array(cps.length);
    fillFlags(cps, flags);
    const pieces: Pieces = { cps, flags, lengths: cps.length > 0 ? [cps.length] : [] };
    for (const engine of this.engines) pieces.lengths = engine(pieces);
    return pieces.lengths;
  }
}
