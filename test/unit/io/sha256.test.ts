/**
 * The incremental SHA-256 against Node's crypto: FIPS 180-4 vectors, every padding boundary (lengths 0…130), and the
 * fixture fed in uneven pieces — the store relies on this to verify multi-GiB models chunk by chunk.
 */

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Sha256, sha256Hex } from '../../../src/io/sha256.js';
import { sharedPath } from '../../helpers/shared-path.js';

const nodeSha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

describe('Sha256', () => {
  it('matches the FIPS 180-4 examples', () => {
    const enc = new TextEncoder();
    expect(sha256Hex(enc.encode('abc'))).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex(new Uint8Array(0))).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex(enc.encode('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq'))).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    );
  });

  it('matches node:crypto at every length around the padding boundaries', () => {
    const data = Uint8Array.from({ length: 130 }, (_, i) => (i * 131 + 7) & 0xff);
    for (let n = 0; n <= 130; n++) expect(sha256Hex(data.subarray(0, n))).toBe(nodeSha(data.subarray(0, n)));
  });

  it('gives the same digest however the input is split', () => {
    const fixture = new Uint8Array(readFileSync(sharedPath('models', 'stories260K.gguf')));
    const h = new Sha256();
    for (let pos = 0, step = 1; pos < fixture.byteLength; step = (step * 7 + 13) % 70_001) {
      h.update(fixture.subarray(pos, pos + step));
      pos += step;
    }
    expect(h.digestHex()).toBe(nodeSha(fixture));
    expect(() => h.update(new Uint8Array(1))).toThrow();
  });
});
