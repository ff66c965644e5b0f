/**
 * Token ids → bytes → text, as llama.cpp's `token_to_piece` and `detokenize`: control/unknown tokens render only on
 * request, user-defined ones always as their text, SPM/WPM pieces turn '▁' into spaces, byte-level BPE pieces map back
 * through GPT-2's alphabet (SPM-style BPE such as Gemma 4 unescapes '▁' instead), `<0xXX>` byte tokens give their
 * byte; RWKV pieces are their unescaped bytes and PLaMo-2 pieces their text as stored. A whole sequence drops the first
 * piece's leading space (when `add_space_prefix`) and applies BPE's `clean_spaces`. `Utf8StreamDecoder` never emits a UTF-8 sequence split across tokens.
 */

import type { StreamDecoder } from './tokenizer.js';
import { CHAR_TO_BYTE, utf8Encode } from './unicode.js';
import { TokenAttr, type Vocab } from './vocab.js';

const EMPTY = new Uint8Array(0);
const HEX = '0123456789abcdef';

/** Piece bytes of every token, computed on first use. */
export class Detokenizer {
  /** Pieces with special tokens rendered, by token id; the array is made by the first `piece` call, not at load. */
  private pieces: (Uint8Array | undefined)[] | null = null;
  private readonly decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

  constructor(private readonly vocab: Vocab) {}

  /** Bytes of one token (`renderSpecial`: control and unknown tokens as their text, else nothing). Id must be valid. */
  piece(id: number, renderSpecial: boolean): Uint8Array {
    const attr = this.vocab.attrs[id];
    if (!renderSpecial && attr & (TokenAttr.Control | TokenAttr.Unknown)) return EMPTY;
    this.pieces ??= new Array<Uint8Array | undefined>(this.vocab.size);
    let p = this.pieces[id];
    if (p === undefined) {
      p = this.computePiece(id, attr);
      this.pieces[id] = p;
    }
    return p;
  }

  private computePiece(id: number, attr: number): Uint8Array {
    const text = this.vocab.tokens[id];
    const type = this.vocab.type;
    if (type === 'rwkv') return unescapeRwkv(text);
    if (type === 'test') return utf8Encode(id.toString(16));
    if (type === 'plamo2') {
      if (attr & TokenAttr.Byte && /^<0x[0-9A-Fa-f]{2}>$/.test(text))
        return Uint8Array.of(parseInt(text.slice(3, 5), 16));
      return utf8Encode(text);
    }
    if (attr & (TokenAttr.Control | TokenAttr.Unknown | TokenAttr.UserDefined)) return utf8Encode(text);
    if (attr & TokenAttr.Normal) {
      if (type === 'bpe' && !this.vocab.escapeWhitespaces) return byteLevelDecode(text);
      return utf8Encode(text.replaceAll('\u2581', ' '));
    }
    if (attr & TokenAttr.Byte) {
      return Uint8Array.of(strtolHex(text.slice(3, 5)));
    }
    return EMPTY; // unused / undefined tokens render as nothing
  }

  /** Whole-sequence bytes (llama.cpp `detokenize` with remove_special = false). Ids must be valid. */
  bytes(ids: readonly number[], renderSpecial: boolean): Uint8Array {
    const parts: Uint8Array[] = [];
    let total = 0;
    let removeSpace = this.vocab.addSpacePrefix && this.vocab.type !== 'rwkv'; // RWKV pieces skip llama.cpp's lstrip
    for (const id of ids) {
      let p = this.piece(id, renderSpecial);
      if (removeSpace && p.length > 0 && p[0] === 0x20) p = p.subarray(1);
      removeSpace = false;
      parts.push(p);
      total += p.length;
    }
    let out: Uint8Array = new Uint8Array(total);
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    if (this.vocab.cleanSpaces) out = cleanSpaces(out);
    return out;
  }

  /** Whole-sequence text. */
  text(ids: readonly number[], renderSpecial: boolean): string {
    return this.decoder.decode(this.bytes(ids, renderSpecial));
  }
}

/** C `strtol(s, NULL, 16)` on the two characters of a `<0xXX>` token, as llama.cpp's `token_to_byte` (low byte). */
function strtolHex(s: string): number {
  let v = 0;
  for (const ch of s) {
    const d = parseInt(ch, 16);
    if (Number.isNaN(d)) break;
    v = v * 16 + d;
  }
  return v & 0xff;
}

/**
 * RWKV token text → bytes (llama.cpp `llama_unescape_rwkv_token`): `\\t`, `\\n`, `\\r`, `\\xHH` and `\\<c>` escapes, all
 * other characters as their UTF-8 bytes. Hex digits are read as llama.cpp reads them (no validation).
 */
export function unescapeRwkv(text: string): Uint8Array {
  const src = utf8Encode(text);
  const out: number[] = [];
  let escaping = false;
  let hexLeft = 0;
  let acc = 0;
  for (const c of src) {
    if (hexLeft > 0) {
      acc = ((acc << 4) + (c >= 0x61 ? c - 0x61 + 10 : c - 0x30)) & 0xff;
      if (--hexLeft === 0) {
        out.push(acc);
        acc = 0;
      }
      continue;
    }
    if (escaping) {
      escaping = false;
      if (c === 0x74) out.push(0x09);
      else if (c === 0x6e) out.push(0x0a);
      else if (c === 0x72) out.push(0x0d);
      else if (c === 0x78) hexLeft = 2;
      else out.push(c);
      continue;
    }
    if (c === 0x5c) escaping = true;
    else out.push(c);
  }
  return Uint8Array.from(out);
}

/** Byte-level BPE piece → bytes; characters outside GPT-2's alphabet give llama.cpp's `[UNK_BYTE_0x…]` marker. */
function byteLevelDecode(text: string): Uint8Array {
  const out: number[] = [];
  for (const ch of text) {
    const c = ch.codePointAt(0) ?? 0;
    const b = c < CHAR_TO_BYTE.length ? CHAR_TO_BYTE[c] : -1;
    if (b >= 0) {
      out.push(b);
      continue;
    }
    let marker = '[UNK_BYTE_0x';
    for (const x of utf8Encode(ch)) marker += HEX[x >> 4] + HEX[x & 15];
    marker += text + ']';
    for (const x of utf8Encode(marker)) out.push(x);
  }
  return Uint8Array.from(out);
}

/** llama.cpp's three `clean_spaces` passes: " ?"/" !"/" ."/" ," lose the space, " ' " loses both, " 's" etc. lose it. */
function cleanSpaces(text: Uint8Array): Uint8Array {
  const SP = 0x20,
    Q = 0x27;
  let t = Array.from(text);
  // pass 1
  let out: number[] = t.length ? [t[0]] : [];
  for (let i = 1; i < t.length; i++) {
    const x = t[i];
    if (t[i - 1] === SP && (x === 0x3f || x === 0x21 || x === 0x2e || x === 0x2c)) out.pop();
    out.push(x);
  }
  // pass 2: " ' " → "'"
  t = out;
  out = t.length ? [t[0]] : [];
  for (let i = 1; i < t.length; i++) {
    const x = t[i];
    out.push(x);
    if (x === Q && i + 1 < t.length && t[i - 1] === SP && t[i + 1] === SP) {
      out.splice(out.length - 2, 1); // the space before
      i++; // and the space after is skipped
    }
  }
  // pass 3: contractions " 's", " 'm", " 're", " 've"
  t = out;
  out = t.length ? [t[0]] : [];
  for (let i = 1; i < t.length; i++) {
    const x = t[i];
    if (t[i - 1] === SP && x === Q && i + 1 < t.length) {
      const x1 = t[i + 1];
      if (x1 === 0x73 || x1 === 0x6d) out.pop();
      else if (x1 !== 0x74 && x1 !== 0x64 && i + 2 < t.length) {
        const x2 = t[i + 2];
        if ((x1 === 0x72 && x2 === 0x65) || (x1 === 0x76 && x2 === 0x65)) out.pop();
      }
    }
    out.push(x);
  }
  return Uint8Array.from(out);
}

/** Length of the UTF-8 sequence a lead byte announces (0 for a continuation or invalid byte). */
function seqLength(b: number): number {
  if (b < 0x80) return 1;
  if (b >= 0xc2 && b <= 0xdf) return 2;
  if (b >= 0xe0 && b <= 0xef) return 3;
  if (b >= 0xf0 && b <= 0xf4) return 4;
  return 0;
}

/** Incremental UTF-8 decoding of token pieces: holds back only an incomplete trailing sequence. */
export class Utf8StreamDecoder implements StreamDecoder {
  /** Incomplete tail carried to the next push (at most 3 bytes). */
  private pending: Uint8Array = EMPTY;
  private readonly decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

  constructor(private readonly pieceOf: (id: number) => Uint8Array) {}

  push(id: number): string {
    const p = this.pieceOf(id);
    if (p.length === 0) return '';
    const buf = new Uint8Array(this.pending.length + p.length);
    buf.set(this.pending);
    buf.set(p, this.pending.length);
    // Find where a possibly incomplete sequence starts within the last 3 bytes.
    let cut = buf.length;
    for (let k = 1; k <= Math.min(3, buf.length); k++) {
      const b = buf[buf.length - k];
      if ((b & 0xc0) === 0x80) continue; // continuation byte: keep looking for its lead
      const need = seqLength(b);
      if (need > k) cut = buf.length - k;
      break;
    }
    this.pending = buf.slice(cut);
    return cut > 0 ? this.decoder.decode(buf.subarray(0, cut)) : '';
  }

  flush(): string {
    const rest = this.pending;
    this.pending = EMPTY;
    return rest.length ? this.decoder.decode(rest) : '';
  }
}
