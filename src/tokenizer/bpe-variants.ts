/**
 * The BPE sessions llama.cpp picks by `tokenizer.ggml.model` rather than by pre-tokenizer: `whitespace`
 * (jina-embeddings-v2-base-zh: drop whitespace, optionally lower-case, BPE per remaining run) and `hybriddna`
 * (text between `<dna>` and `</dna>` becomes upper-cased 6-byte k-mers looked up with a U+E000 marker, `<oov>` when
 * absent; everything else is plain BPE).
 */

import type { BpeEncoder } from './bpe.js';
import { CpFlag, cpFlags, cpToLower, utf8Encode } from './unicode.js';
import { DNA_KMER_MARKER, type Vocab } from './vocab.js';

/** `whitespace` model: whitespace code points split the text and vanish; each run is BPE-encoded. */
export function encodeWhitespaceModel(bpe: BpeEncoder, vocab: Vocab, text: string, out: number[]): void {
  let segment = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (cpFlags(cp) & CpFlag.Whitespace) {
      if (segment !== '') bpe.encode(segment, out);
      segment = '';
    } else {
      segment += vocab.lowercase ? String.fromCodePoint(cpToLower(cp)) : ch;
    }
  }
  if (segment !== '') bpe.encode(segment, out);
}

const KMER = 6;
const OPEN = '<dna>';
const CLOSE = '</dna>';

/** `hybriddna` model (falls back to plain BPE when `<dna>`, `</dna>` or `<oov>` is not a token). */
export function encodeHybridDna(bpe: BpeEncoder, vocab: Vocab, text: string, out: number[]): void {
  const open = vocab.id(OPEN);
  const close = vocab.id(CLOSE);
  const oov = vocab.id('<oov>');
  if (open === undefined || close === undefined || oov === undefined) {
    bpe.encode(text, out);
    return;
  }
  let pos = 0;
  while (pos < text.length) {
    const start = text.indexOf(OPEN, pos);
    if (start < 0) {
      bpe.encode(text.slice(pos), out);
      break;
    }
    if (start > pos) bpe.encode(text.slice(pos, start), out);
    out.push(open);
    const contentStart = start + OPEN.length;
    const end = text.indexOf(CLOSE, contentStart);
    emitKmers(vocab, utf8Encode(text.slice(contentStart, end < 0 ? text.length : end)), oov, out);
    if (end < 0) break;
    out.push(close);
    pos = end + CLOSE.length;
  }
}

const strict = new TextDecoder('utf-8', { fatal: true });

/** Upper-cases a-z, cuts into 6-byte k-mers (the last padded with 'A') and looks each up with the marker. */
function emitKmers(vocab: Vocab, raw: Uint8Array, oov: number, out: number[]): void {
  const seq = raw.map((c) => (c >= 0x61 && c <= 0x7a ? c - 32 : c));
  const lookup = (bytes: Uint8Array): number => {
    let kmer: string;
    try {
      kmer = strict.decode(bytes);
    } catch {
      return oov; // a k-mer cut inside a UTF-8 sequence matches no token
    }
    return vocab.id(kmer + DNA_KMER_MARKER) ?? oov;
  };
  let i = 0;
  for (; i + KMER <= seq.length; i += KMER) out.push(lookup(seq.subarray(i, i + KMER)));
  if (i < seq.length) {
    const last = new Uint8Array(KMER).fill(0x41);
    last.set(seq.subarray(i));
    out.push(lookup(last));
  }
}
