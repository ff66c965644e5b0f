/**
 * Incremental SHA-256 (FIPS 180-4), the project's one SHA-256: the model store verifies downloads chunk by chunk with it
 * (`crypto.subtle.digest` cannot hash incrementally, and a multi-GiB model must never be concatenated into one buffer),
 * and the chat layer hashes template text with it synchronously (WebCrypto is async; Node's `crypto` is not in browsers).
 */

/** Round constants: first 32 bits of the fractional parts of the cube roots of the first 64 primes (FIPS 180-4 §4.2.2). */
const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

/** Initial hash value (FIPS 180-4 §5.3.3). */
const H0 = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

/** Streaming SHA-256: `update` any number of times, then `digestHex` once. */
export class Sha256 {
  private readonly state = new Uint32Array(H0); // (8) working hash words
  private readonly block = new Uint8Array(64); // (64) bytes: the partial input block
  private readonly w = new Uint32Array(64); // (64) message schedule words
  private blockFill = 0;
  private totalBytes = 0;
  private isFinished = false;

  /** Feeds `bytes` into the hash. */
  update(bytes: Uint8Array): this {
    if (this.isFinished) throw new Error('Sha256.update after digest');
    this.totalBytes += bytes.byteLength;
    let pos = 0;
    if (this.blockFill > 0) {
      const take = Math.min(64 - this.blockFill, bytes.byteLength);
      this.block.set(bytes.subarray(0, take), this.blockFill);
      this.blockFill += take;
      pos = take;
      if (this.blockFill < 64) return this;
      this.compress(this.block, 0);
      this.blockFill = 0;
    }
    for (; pos + 64 <= bytes.byteLength; pos += 64) this.compress(bytes, pos);
    if (pos < bytes.byteLength) {
      this.block.set(bytes.subarray(pos), 0);
      this.blockFill = bytes.byteLength - pos;
    }
    return this;
  }

  /** Pads, finishes and returns the digest as 64 lowercase hex digits. */
  digestHex(): string {
    if (this.isFinished) throw new Error('Sha256.digestHex called twice');
    const bitLength = this.totalBytes * 8;
    const pad = new Uint8Array(((this.blockFill + 9 + 63) & ~63) - this.blockFill); // 0x80, zeros, 64-bit length
    pad[0] = 0x80;
    const view = new DataView(pad.buffer);
    view.setUint32(pad.byteLength - 8, Math.floor(bitLength / 0x1_0000_0000));
    view.setUint32(pad.byteLength - 4, bitLength >>> 0);
    this.update(pad);
    this.isFinished = true;
    let hex = '';
    for (const word of this.state) hex += word.toString(16).padStart(8, '0');
    return hex;
  }

  /** One 64-byte block at `bytes[at…]` (FIPS 180-4 §6.2.2). */
  private compress(bytes: Uint8Array, at: number): void {
    const w = this.w;
    for (let t = 0; t < 16; t++) {
      const i = at + t * 4;
      w[t] = (bytes[i] << 24) | (bytes[i + 1] << 16) | (bytes[i + 2] << 8) | bytes[i + 3];
    }
    for (let t = 16; t < 64; t++) {
      const x = w[t - 15];
      const y = w[t - 2];
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      w[t] = (w[t - 16] + s0 + w[t - 7] + s1) | 0;
    }
    const s = this.state;
    let a = s[0],
      b = s[1],
      c = s[2],
      d = s[3],
      e = s[4],
      f = s[5],
      g = s[6],
      h = s[7];
    for (let t = 0; t < 64; t++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const ch = (e & f) ^ (~e & g);
      const t1 = (h + S1 + ch + K[t] + w[t]) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const maj = (a & b) ^ (a & c) ^ (b & c);
      const t2 = (S0 + maj) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    s[0] += a;
    s[1] += b;
    s[2] += c;
    s[3] += d;
    s[4] += e;
    s[5] += f;
    s[6] += g;
    s[7] += h;
  }
}

/** SHA-256 of `input` (bytes, or a string hashed as its UTF-8 bytes) as 64 lowercase hex digits. */
export function sha256Hex(input: Uint8Array | string): string {
  const bytes = typeof input === 'string' ? new TextEncoder().encode(input) : input;
  return new Sha256().update(bytes).digestHex();
}

/**
 * SHA-256 of `bytes` as 64 lowercase hex digits, through WebCrypto where it exists (native speed: it verifies stored
 * model chunks on every open) and this file's `Sha256` elsewhere (insecure contexts have no `crypto.subtle`).
 */
export async function sha256HexAsync(bytes: Uint8Array): Promise<string> {
  const subtle = globalThis.crypto?.subtle;
  if (subtle !== undefined) {
    try {
      const digest = new Uint8Array(await subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
      let hex = '';
      for (const b of digest) hex += b.toString(16).padStart(2, '0');
      return hex;
    } catch {
      // fall back to the portable implementation below
    }
  }
  return sha256Hex(bytes);
}
