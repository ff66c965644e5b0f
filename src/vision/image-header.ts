/**
 * Reads an encoded image's format and dimensions from its first bytes (PNG IHDR, JPEG SOFn, GIF logical screen,
 * WebP VP8/VP8L/VP8X, BMP info header) so that bad input fails before any decoder allocates: not an image, a header
 * cut short, zero or huge dimensions are `invalid-request` naming what is wrong. Decoders call this first.
 */

import { LlmError } from '../errors.js';
import { MAX_IMAGE_SIDE } from './preprocess-image.js';

/** The most pixels a decoded image may hold (64 Mi px = 256 MiB as RGBA): bounds a decoder's memory. */
export const MAX_IMAGE_PIXELS = 64 * 1024 * 1024;

/** Bytes a caller should pass: enough for every header this reads, including JPEG's APPn segments in front. */
export const IMAGE_HEADER_BYTES = 256 * 1024;

type ImageFormat = 'png' | 'jpeg' | 'gif' | 'webp' | 'bmp';

/** What the header says. */
export interface ImageHeader {
  readonly format: ImageFormat;
  readonly mime: string;
  readonly width: number;
  readonly height: number;
}

const bad = (message: string, details: Record<string, string | number>): LlmError =>
  new LlmError('invalid-request', message, { details });

const truncated = (format: ImageFormat): LlmError =>
  bad(`the ${format.toUpperCase()} image is truncated: its header ends before its dimensions`, { format });

const be16 = (b: Uint8Array, o: number): number => (b[o] << 8) | b[o + 1];
const le16 = (b: Uint8Array, o: number): number => b[o] | (b[o + 1] << 8);
const be32 = (b: Uint8Array, o: number): number => ((b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3]) >>> 0;
const le24 = (b: Uint8Array, o: number): number => b[o] | (b[o + 1] << 8) | (b[o + 2] << 16);
const le32s = (b: Uint8Array, o: number): number => b[o] | (b[o + 1] << 8) | (b[o + 2] << 16) | (b[o + 3] << 24);
const ascii = (b: Uint8Array, o: number, s: string): boolean =>
  b.length >= o + s.length && [...s].every((c, i) => b[o + i] === c.charCodeAt(0));

function png(b: Uint8Array): [number, number] {
  if (b.length < 24) throw truncated('png');
  if (!ascii(b, 12, 'IHDR')) throw bad('the PNG image does not start with an IHDR chunk', { format: 'png' });
  return [be32(b, 16), be32(b, 20)];
}

function jpeg(b: Uint8Array): [number, number] {
  let o = 2;
  while (o + 4 <= b.length) {
    if (b[o] !== 0xff) throw bad(`the JPEG image is corrupt: no marker at byte ${o}`, { format: 'jpeg', offset: o });
    const m = b[o + 1];
    if (m === 0xff) {
      o++; // fill byte
      continue;
    }
    if (m === 0xd8 || m === 0x01 || (m >= 0xd0 && m <= 0xd7)) {
      o += 2; // markers without a length
      continue;
    }
    if (m === 0xd9 || m === 0xda) break; // end of image or start of scan before any frame header
    const len = be16(b, o + 2);
    const isSof = m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc;
    if (isSof) {
      if (o + 9 > b.length) break;
      return [be16(b, o + 7), be16(b, o + 5)];
    }
    o += 2 + len;
  }
  throw truncated('jpeg');
}

function webp(b: Uint8Array): [number, number] {
  if (b.length < 30) throw truncated('webp');
  if (ascii(b, 12, 'VP8 ')) return [le16(b, 26) & 0x3fff, le16(b, 28) & 0x3fff];
  if (ascii(b, 12, 'VP8L')) {
    const bits = (b[21] | (b[22] << 8) | (b[23] << 16) | (b[24] << 24)) >>> 0;
    return [(bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1];
  }
  if (ascii(b, 12, 'VP8X')) return [le24(b, 24) + 1, le24(b, 27) + 1];
  throw bad('the WebP image has an unknown chunk where its frame header should be', { format: 'webp' });
}

/** The format and dimensions of the encoded image starting `bytes` (pass at least its first `IMAGE_HEADER_BYTES`). */
export function readImageHeader(bytes: Uint8Array): ImageHeader {
  let format: ImageFormat;
  let dims: [number, number];
  if (bytes.length >= 8 && be32(bytes, 0) === 0x89504e47 && be32(bytes, 4) === 0x0d0a1a0a) {
    format = 'png';
    dims = png(bytes);
  } else if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) {
    format = 'jpeg';
    dims = jpeg(bytes);
  } else if (ascii(bytes, 0, 'GIF87a') || ascii(bytes, 0, 'GIF89a')) {
    format = 'gif';
    if (bytes.length < 10) throw truncated('gif');
    dims = [le16(bytes, 6), le16(bytes, 8)];
  } else if (ascii(bytes, 0, 'RIFF') && ascii(bytes, 8, 'WEBP')) {
    format = 'webp';
    dims = webp(bytes);
  } else if (ascii(bytes, 0, 'BM')) {
    format = 'bmp';
    if (bytes.length < 26) throw truncated('bmp');
    dims = [Math.abs(le32s(bytes, 18)), Math.abs(le32s(bytes, 22))];
  } else {
    throw bad(`not an image: ${bytes.length} bytes without a PNG, JPEG, GIF, WebP or BMP signature`, {
      bytes: bytes.length,
    });
  }
  const [width, height] = dims;
  if (
    width < 1 ||
    height < 1 ||
    width > MAX_IMAGE_SIDE ||
    height > MAX_IMAGE_SIDE ||
    width * height > MAX_IMAGE_PIXELS
  ) {
    throw bad(
      `the ${format.toUpperCase()} image is ${width}×${height}; each side must be in [1, ${MAX_IMAGE_SIDE}] and the area at most ${MAX_IMAGE_PIXELS} pixels`,
      { format, width, height, limit: MAX_IMAGE_SIDE },
    );
  }
  return { format, mime: format === 'jpeg' ? 'image/jpeg' : `image/${format}`, width, height };
}
