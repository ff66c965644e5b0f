/**
 * `chunkSum`: a fast 128-bit checksum of a stored chunk (issue 20), recorded next to the chunk's sha256 when it is
 * written to the model store and checked instead of it when a model is loaded from the store. The check is for
 * storage integrity — bytes that changed in IndexedDB since they were written — not against an adversary (one who
 * can rewrite the stored bytes can rewrite the recorded checksums too), and sha256 was most of a cached load's CPU
 * time in Chromium (~0.4 s for a 335 MiB model, WebCrypto on the hashing thread, ~0.8 GB/s; this sum: several GB/s).
 *
 * Four independent 32-bit lanes over the chunk's little-endian words (lane l takes words 4i + l; each step
 * `lane = rotl(lane + w·P2, 13)·P1`, the round of xxHash32), the 0–15 trailing bytes folded into lane 0, the length
 * mixed in, each lane avalanched: 32 hex digits. Any change confined to one word changes its lane's state (the step is
 * a bijection of the lane for a fixed word and of the word for a fixed lane), so every single-word error is caught.
 *
 * The function is self-contained (no imports, no outside constants): the chunk worker's inline script embeds its
 * source text (`String(chunkSum)`), so the worker and this thread compute the same sum from one definition.
 */

/** The 128-bit checksum of `bytes` as 32 lowercase hex digits. */
export function chunkSum(bytes: Uint8Array): string {
  const P1 = 0x9e3779b1 | 0;
  const P2 = 0x85ebca77 | 0;
  const P3 = 0xc2b2ae3d | 0;
  const P4 = 0x27d4eb2f | 0;
  const P5 = 0x165667b1 | 0;
  const n = bytes.byteLength;
  const nWords = n >>> 2;
  // (nWords) little-endian words: a view when aligned, else one copy.
  const words =
    bytes.byteOffset % 4 === 0
      ? new Int32Array(bytes.buffer, bytes.byteOffset, nWords)
      : new Int32Array(bytes.slice(0, nWords * 4).buffer, 0, nWords);
  let a = (P1 + P2) | 0;
  let b = P2;
  let c = 0;
  let d = -P1 | 0;
  const end4 = nWords & ~3;
  for (let i = 0; i < end4; i += 4) {
    a = (a + Math.imul(words[i], P2)) | 0;
    a = Math.imul((a << 13) | (a >>> 19), P1);
    b = (b + Math.imul(words[i + 1], P2)) | 0;
    b = Math.imul((b << 13) | (b >>> 19), P1);
    c = (c + Math.imul(words[i + 2], P2)) | 0;
    c = Math.imul((c << 13) | (c >>> 19), P1);
    d = (d + Math.imul(words[i + 3], P2)) | 0;
    d = Math.imul((d << 13) | (d >>> 19), P1);
  }
  for (let i = end4; i < nWords; i++) {
    a = (a + Math.imul(words[i], P3)) | 0;
    a = Math.imul((a << 17) | (a >>> 15), P4);
  }
  for (let i = nWords * 4; i < n; i++) {
    a = (a + Math.imul(bytes[i], P5)) | 0;
    a = Math.imul((a << 11) | (a >>> 21), P1);
  }
  const lanes = [a ^ n, (b + a) | 0, (c + b) | 0, (d + c) | 0];
  let out = '';
  for (let h of lanes) {
    h ^= h >>> 15;
    h = Math.imul(h, P2);
    h ^= h >>> 13;
    h = Math.imul(h, P3);
    h ^= h >>> 16;
    out += (h >>> 0).toString(16).padStart(8, '0');
  }
  return out;
}
