/**
 * Decoding a run of GGUF strings with ONE `TextDecoder.decode` call (issue 20: cached load). A vocabulary is
 * ~300,000 short strings (tokens and merges); in Chromium each `decode` call costs ~0.8 µs of binding overhead, so
 * decoding them one by one took 0.2–0.5 s of a model load on the page's thread. Stored back to back, a string's
 * u64 length prefix is 8 ASCII bytes when the length is below 128; a run of such strings whose bytes are valid UTF-8
 * (checked by a fatal decoder over the whole span: an ASCII prefix cannot sit inside a multi-byte sequence, so each
 * string is then valid alone) decodes the same at once as one by one, and is cut by each string's UTF-16 length
 * (its bytes that are not continuation bytes, plus one per 4-byte sequence). A run that is not valid is decoded
 * string by string, exactly as before (invalid bytes become U+FFFD).
 */

const FATAL_UTF8 = new TextDecoder('utf-8', { ignoreBOM: true, fatal: true });

/**
 * Decodes the consecutive GGUF strings of `bytes` that start at `start` — `lengths[k]` bytes each, each but the first
 * preceded by its 8-byte length prefix (so each but the first shorter than 128 bytes) — into `out[at…]` with one
 * call; false (nothing written) when the span is not valid UTF-8. Offsets, not views: a subarray per string cost
 * more of a vocabulary's parse than its decode.
 */
export function decodeStringRun(
  bytes: Uint8Array,
  start: number,
  lengths: readonly number[],
  out: string[],
  at: number,
): boolean {
  let end = start - 8;
  for (let k = 0; k < lengths.length; k++) end += 8 + lengths[k];
  let text: string;
  try {
    text = FATAL_UTF8.decode(bytes.subarray(start, end));
  } catch {
    return false;
  }
  let pos = 0;
  let p = start;
  for (let k = 0; k < lengths.length; k++) {
    const n = lengths[k];
    let units = n;
    for (const stop = p + n; p < stop; p++) {
      const x = bytes[p];
      if ((x & 0xc0) === 0x80) units--;
      else if (x >= 0xf0) units++;
    }
    out[at + k] = text.slice(pos, pos + units);
    pos += units + 8; // the next string's length prefix: 8 ASCII characters
    p += 8;
  }
  return true;
}
