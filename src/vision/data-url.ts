/**
 * `data:` URLs of images (OpenAI `image_url` content parts): `data:[<mime>][;base64],<payload>` decoded to bytes, a
 * malformed URL or payload `invalid-request` naming what is wrong. Works in browsers, workers and Node (`atob`).
 */

import { LlmError } from '../errors.js';

/** Largest data URL accepted, in characters: 64 MiB of base64 is 48 MiB of image. */
const MAX_DATA_URL_CHARS = 64 * 1024 * 1024;

/** The bytes and declared media type of a `data:` URL. */
export function decodeDataUrl(url: string): { mime: string; bytes: Uint8Array<ArrayBuffer> } {
  if (url.length > MAX_DATA_URL_CHARS) {
    throw new LlmError('invalid-request', `the data URL is ${url.length} characters, over ${MAX_DATA_URL_CHARS}`, {
      details: { field: 'image_url.url', length: url.length, limit: MAX_DATA_URL_CHARS },
    });
  }
  const m = /^data:([^,;]*)((?:;[^,;]*)*?)(;base64)?,/i.exec(url);
  if (m === null) {
    throw new LlmError(
      'invalid-request',
      `not a data URL: '${url.slice(0, 40)}…'; expected data:<mime>;base64,<data>`,
      {
        details: { field: 'image_url.url' },
      },
    );
  }
  const mime = m[1].toLowerCase() || 'text/plain';
  const payload = url.slice(m[0].length);
  let bin: string;
  try {
    if (m[3] === undefined) return { mime, bytes: new TextEncoder().encode(decodeURIComponent(payload)) };
    bin = atob(payload.replace(/\s+/g, ''));
  } catch (cause) {
    throw new LlmError(
      'invalid-request',
      `the data URL holds invalid ${m[3] === undefined ? 'percent-encoding' : 'base64'}`,
      {
        details: { field: 'image_url.url' },
        cause,
      },
    );
  }
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return { mime, bytes };
}
