/**
 * Decoder of the generated grid tables (src/quant/grids/*.ts, made by scripts/oracle/make-iq-grids.mjs): a string of
 * whitespace-separated hex entries, as written in ggml-common.h, to their little-endian bytes.
 */

/** Bytes of `hex`'s entries of `entryBytes` bytes each; byte j of an entry is bits [8j, 8j + 8) of its value. */
export function hexTable(entryBytes: number, hex: string): Uint8Array {
  const entries = hex.trim().split(/\s+/);
  const out = new Uint8Array(entries.length * entryBytes); // (entries, entryBytes)
  for (let e = 0; e < entries.length; e++) {
    const s = entries[e]!;
    for (let j = 0; j < entryBytes; j++) {
      const at = s.length - 2 * (j + 1);
      out[e * entryBytes + j] = Number.parseInt(s.slice(at, at + 2), 16);
    }
  }
  return out;
}
