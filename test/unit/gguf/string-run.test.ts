/**
 * String arrays decoded in runs (src/gguf/string-run.ts, issue 20): the parser decodes runs of short strings with one
 * TextDecoder call where they are valid UTF-8 and cuts them by counted UTF-16 lengths. The result must equal decoding every
 * string alone — for ASCII, 2/3/4-byte sequences (surrogate pairs), a leading U+FEFF, NUL, every kind of invalid
 * sequence (each then decoded alone, U+FFFD as before), strings of 128+ bytes (their length prefix is not ASCII),
 * empty strings — across the parser's load boundaries and its abort ticks (200,000 strings; no invalid ones, a few,
 * many).
 */

import { describe, expect, it } from 'vitest';
import { GgufValueType, parseGguf } from '../../../src/gguf/index.js';
import { MemoryByteSource } from '../../../src/io/byte-source.js';

const enc = new TextEncoder();
const one = new TextDecoder('utf-8', { ignoreBOM: true });

/** A header-only GGUF whose one key is an array of the given raw strings. */
function stringArrayGguf(strings: readonly Uint8Array[]): Uint8Array {
  const key = enc.encode('tokenizer.ggml.tokens');
  const size = 32 + key.length + 16 + strings.reduce((s, b) => s + 8 + b.length, 0);
  const out = new Uint8Array(size);
  const dv = new DataView(out.buffer);
  out.set([0x47, 0x47, 0x55, 0x46]);
  dv.setUint32(4, 3, true);
  dv.setBigUint64(16, 1n, true);
  dv.setBigUint64(24, BigInt(key.length), true);
  out.set(key, 32);
  let at = 32 + key.length;
  dv.setUint32(at, GgufValueType.ARRAY, true);
  dv.setUint32(at + 4, GgufValueType.STRING, true);
  dv.setBigUint64(at + 8, BigInt(strings.length), true);
  at += 16;
  for (const s of strings) {
    dv.setBigUint64(at, BigInt(s.length), true);
    out.set(s, at + 8);
    at += 8 + s.length;
  }
  return out;
}

/** Deterministic pseudo-random generator (xorshift32). */
function rng(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

const SPECIAL = ['Ġthe', '\uFEFF', 'é', '日本語', '😀x', '\0', '', 'a'.repeat(130), 'ü'.repeat(70)].map((s) =>
  enc.encode(s),
);
const INVALID = [
  [0x80],
  [0xc3],
  [0xc0, 0x80],
  [0xe0, 0x80, 0x80],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf0, 0x9f, 0x98],
  [0x61, 0xff, 0x62],
  [0xf8],
].map((b) => new Uint8Array(b));

describe('GGUF string arrays decoded in runs', () => {
  for (const invalidShare of [0, 0.00002, 0.01]) {
    it(`parse to the same strings as decoding each alone, across loads and ticks (invalid: ${invalidShare})`, async () => {
      const r = rng(11);
      const strings: Uint8Array[] = [];
      for (let i = 0; i < 200_000; i++) {
        const p = r();
        if (p < invalidShare) strings.push(INVALID[Math.floor(r() * INVALID.length)]);
        else if (p < 0.02) strings.push(SPECIAL[Math.floor(r() * SPECIAL.length)]);
        else strings.push(enc.encode(`${r() < 0.3 ? 'Ġ' : ''}w${Math.floor(r() * 1e6).toString(36)}`));
      }
      const gguf = await parseGguf(new MemoryByteSource(stringArrayGguf(strings), 'strings.gguf'));
      const got = gguf.metadata['tokenizer.ggml.tokens'] as string[];
      expect(got.length).toBe(strings.length);
      const want = strings.map((s) => one.decode(s));
      for (let i = 0; i < want.length; i++) if (got[i] !== want[i]) expect([i, got[i]]).toEqual([i, want[i]]);
    });
  }
});
