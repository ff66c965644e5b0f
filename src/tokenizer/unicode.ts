/**
 * Unicode facts the tokenizers need, defined exactly as llama.cpp defines them (src/unicode.cpp, unicode-data.cpp):
 * one general-category flag per code point (N, L, Z, M, P, S, C, or undefined for code points unassigned in Unicode
 * 15.1 — the table's version — whatever the JS engine's newer Unicode says), the
 * White_Space property, first-code-point lower-casing and NFD, GPT-2's byte ⇄ printable-character map, and UTF-8
 * conversions that turn invalid UTF-16 (lone surrogates) into U+FFFD instead of failing.
 */

import { unassignedInUnicode151 } from './unicode-15-1-unassigned.js';

/** Category and helper flags of one code point (bit values of llama.cpp's `unicode_cpt_flags`). */
export enum CpFlag {
  Undefined = 0x0001,
  Number = 0x0002,
  Letter = 0x0004,
  Separator = 0x0008,
  AccentMark = 0x0010,
  Punctuation = 0x0020,
  Symbol = 0x0040,
  Control = 0x0080,
  Categories = 0x00ff,
  Whitespace = 0x0100,
}

const MAX_CODEPOINT = 0x10ffff;
const RE_N = /\p{N}/u;
const RE_L = /\p{L}/u;
const RE_Z = /\p{Z}/u;
const RE_M = /\p{M}/u;
const RE_P = /\p{P}/u;
const RE_S = /\p{S}/u;
const RE_WS = /\p{White_Space}/u;
const RE_CN = /\p{Cn}/u;

/** Lazily filled flag table: 0 = not computed yet (every real entry has at least one category bit). Shape: (0x110000,) */
let flagTable: Uint16Array | null = null;

function computeFlags(cp: number): number {
  if (unassignedInUnicode151(cp)) return CpFlag.Undefined; // llama.cpp: not control, not whitespace, no category
  const ch = String.fromCodePoint(cp);
  let f: number;
  if (RE_N.test(ch)) f = CpFlag.Number;
  else if (RE_L.test(ch)) f = CpFlag.Letter;
  else if (RE_Z.test(ch)) f = CpFlag.Separator;
  else if (RE_M.test(ch)) f = CpFlag.AccentMark;
  else if (RE_P.test(ch)) f = CpFlag.Punctuation;
  else if (RE_S.test(ch)) f = CpFlag.Symbol;
  else if (RE_CN.test(ch))
    f = CpFlag.Undefined; // unassigned in an engine older than Unicode 15.1
  else f = CpFlag.Control; // Cc, Cf, Cs, Co
  if (RE_WS.test(ch)) f |= CpFlag.Whitespace;
  return f;
}

/** Flags of code point `cp` (0 for values outside 0..0x10FFFF, llama.cpp's "undefined"). */
export function cpFlags(cp: number): number {
  if (cp < 0 || cp > MAX_CODEPOINT) return 0;
  const table = flagTable ?? (flagTable = new Uint16Array(MAX_CODEPOINT + 1));
  let f = table[cp];
  if (f === 0) {
    f = computeFlags(cp);
    table[cp] = f;
  }
  return f;
}

/** Fills `out[i]` with the flags of `cps[i]`. Shape: out (n,) u16 */
export function fillFlags(cps: Uint32Array, out: Uint16Array): void {
  const table = flagTable ?? (flagTable = new Uint16Array(MAX_CODEPOINT + 1));
  for (let i = 0; i < cps.length; i++) {
    const cp = cps[i];
    let f = table[cp];
    if (f === 0) f = cpFlags(cp);
    out[i] = f;
  }
}

/** Lower-case mapping of one code point: the first code point of its full lower-case form (Python `ch.lower()[0]`). */
export function cpToLower(cp: number): number {
  if (cp < 0x80) return cp >= 0x41 && cp <= 0x5a ? cp + 32 : cp;
  if (unassignedInUnicode151(cp)) return cp; // llama.cpp's table has no case mapping for it
  return String.fromCodePoint(cp).toLowerCase().codePointAt(0) ?? cp;
}

/** First code point of the NFD decomposition (what llama.cpp's `unicode_cpts_normalize_nfd` keeps). */
export function cpNfdFirst(cp: number): number {
  if (cp < 0xc0 || unassignedInUnicode151(cp)) return cp;
  return String.fromCodePoint(cp).normalize('NFD').codePointAt(0) ?? cp;
}

/**
 * Code points of a JS string. Lone surrogates become U+FFFD, exactly what encoding the string as UTF-8 would give.
 * Shape: (n code points,) u32.
 */
export function toCodepoints(text: string): Uint32Array {
  const n = text.length;
  const out = new Uint32Array(n);
  let k = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) {
      out[k++] = c;
      continue;
    }
    if (c <= 0xdbff && i + 1 < n) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        out[k++] = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
        continue;
      }
    }
    out[k++] = 0xfffd;
  }
  return k === n ? out : out.subarray(0, k);
}

/** The string with every lone surrogate replaced by U+FFFD (a string that encodes to valid UTF-8). */
export function toWellFormed(text: string): string {
  // Fast path: most text has no surrogates at all.
  if (!/[\ud800-\udfff]/.test(text)) return text;
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        out += text[i] + text[i + 1];
        i++;
        continue;
      }
    }
    out += c >= 0xd800 && c <= 0xdfff ? '\ufffd' : text[i];
  }
  return out;
}

/** Number of UTF-8 bytes of one code point. */
export function utf8Length(cp: number): number {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/** UTF-8 byte length of a string (lone surrogates count as the 3 bytes of U+FFFD), without encoding it. */
export function utf8ByteLength(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

const encoder = new TextEncoder();

/** UTF-8 bytes of a string (lone surrogates → EF BF BD). */
export function utf8Encode(text: string): Uint8Array {
  return encoder.encode(text);
}

/**
 * GPT-2's byte-level alphabet: byte b ↦ a printable character. Printable Latin-1 bytes map to themselves, the other
 * 68 bytes to U+0100.. in byte order (openai/gpt-2 encoder.py `bytes_to_unicode`, llama.cpp `unicode_byte_to_utf8_map`).
 */
export const BYTE_TO_CHAR: readonly string[] = (() => {
  const map: string[] = new Array<string>(256);
  let n = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    map[b] = printable ? String.fromCharCode(b) : String.fromCharCode(256 + n++);
  }
  return map;
})();

/** Inverse of `BYTE_TO_CHAR`: character code ↦ byte, or -1. Shape: (0x144,) i16 covering U+0000..U+0143. */
export const CHAR_TO_BYTE: Int16Array = (() => {
  const inv = new Int16Array(0x144).fill(-1);
  BYTE_TO_CHAR.forEach((ch, b) => {
    inv[ch.charCodeAt(0)] = b;
  });
  return inv;
})();

/** Byte-level encoding of a string: its UTF-8 bytes, each mapped through `BYTE_TO_CHAR`. */
export function byteLevelEncode(text: string): string {
  let ascii = true;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c <= 0x20 || c >= 0x7f) {
      ascii = false;
      break;
    }
  }
  if (ascii) return text;
  const bytes = utf8Encode(text);
  let out = '';
  for (let i = 0; i < bytes.length; i++) out += BYTE_TO_CHAR[bytes[i]];
  return out;
}
