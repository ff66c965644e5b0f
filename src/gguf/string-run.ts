/**
 * Decoding a run of GGUF strings with ONE `TextDecoder.decode` call (issue 20: cached load). A vocabulary is
 * ~300,000 short strings (tokens and merges); in Chromium each `decode` call costs ~0.8 µs of binding overhead, so
 * decoding them one by one took 0.2–0.5 s of a model load on the page's thread. Stored back to back, a string's
 * u64 length prefix is 8 ASCII bytes when the length is below 128, and strings that are valid UTF-8 decode the same
 * alone or concatenated (UTF-8 is self-synchronising), so a run of such strings is decoded at once and cut by each
 * string's UTF-16 length, counted while checking it is valid. Anything else (an invalid byte, a long string) ends
 * the run and is decoded alone, exactly as before: the results are identical.
 */

/** UTF-16 code units of `b[from, to)` when it is valid UTF-8 (WHATWG decoder rules), else -1. */
export function utf16LengthOfValidUtf8(b: Uint8Array, from: number, to: number): number {
  let units = 0;
  let i = from;
  while (i < to) {
    const x = b[i];
    if (x < 0x80) {
      i++;
      units++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (x >= 0xc2 && x <= 0xdf) need = 1;
    else if (x >= 0xe0 && x <= 0xef) {
      need = 2;
      if (x === 0xe0) lo = 0xa0;
      else if (x === 0xed) hi = 0x9f;
    } else if (x >= 0xf0 && x <= 0xf4) {
      need = 3;
      if (x === 0xf0) lo = 0x90;
      else if (x === 0xf4) hi = 0x8f;
    } else return -1;
    if (i + need >= to) return -1; // the sequence runs past the string's end
    const y = b[i + 1];
    if (y < lo || y > hi) return -1;
    for (let k = 2; k <= need; k++) {
      const z = b[i + k];
      if (z < 0x80 || z > 0xbf) return -1;
    }
    i += need + 1;
    units += need === 3 ? 2 : 1;
  }
  return units;
}

/**
 * Decodes `views` — consecutive GGUF strings, each a view of the same buffer, each but the first preceded there by
 * its 8-byte length prefix (length < 128, so the prefix is ASCII), all valid UTF-8 — with one `decode` call over the
 * span, cut by `units` (each string's UTF-16 length), into `out[at…]`.
 */
export function decodeStringRun(
  decoder: TextDecoder,
  views: readonly Uint8Array[],
  units: readonly number[],
  out: string[],
  at: number,
): void {
  const first = views[0];
  const last = views[views.length - 1];
  const span = new Uint8Array(first.buffer, first.byteOffset, last.byteOffset + last.byteLength - first.byteOffset);
  const text = decoder.decode(span);
  let pos = 0;
  for (let k = 0; k < views.length; k++) {
    out[at + k] = text.slice(pos, pos + units[k]);
    pos += units[k] + 8; // the next string's length prefix: 8 ASCII characters
  }
}
