/**
 * llama.cpp's `test` vocabulary type (`tokenizer.ggml.model = test`), meant for exercising pipelines without a real
 * tokenizer: every 5 UTF-8 bytes of a raw fragment hash (h = h·31 + byte, mod 2^64) to `h mod n_vocab`; a token
 * detokenizes to its id in lower-case hex.
 */

import { utf8Encode } from './unicode.js';

const CHUNK = 5;
const MASK = (1n << 64n) - 1n;

/** Appends the ids of one raw-text fragment for a `test` vocabulary of `nVocab` tokens. */
export function encodeTestVocab(text: string, nVocab: number, out: number[]): void {
  const bytes = utf8Encode(text);
  const n = BigInt(nVocab);
  for (let pos = 0; pos < bytes.length; pos += CHUNK) {
    let h = 0n;
    for (let i = pos; i < Math.min(pos + CHUNK, bytes.length); i++) h = (h * 31n + BigInt(bytes[i])) & MASK;
    out.push(Number(h % n));
  }
}
