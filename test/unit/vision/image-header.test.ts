import { describe, expect, it } from 'vitest';
import { decodeDataUrl } from '../../../src/vision/data-url.js';
import { MAX_IMAGE_PIXELS, readImageHeader } from '../../../src/vision/image-header.js';
import { thrownLlmError } from '../../helpers/llm-error.js';

const bytes = (...parts: (number[] | string)[]): Uint8Array =>
  new Uint8Array(parts.flatMap((p) => (typeof p === 'string' ? [...p].map((c) => c.charCodeAt(0)) : p)));
const be32 = (v: number) => [(v >>> 24) & 255, (v >>> 16) & 255, (v >>> 8) & 255, v & 255];
const be16 = (v: number) => [(v >>> 8) & 255, v & 255];
const le16 = (v: number) => [v & 255, (v >>> 8) & 255];
const le32 = (v: number) => [v & 255, (v >>> 8) & 255, (v >>> 16) & 255, (v >>> 24) & 255];

const png = (w: number, h: number) =>
  bytes([0x89], 'PNG', [0x0d, 0x0a, 0x1a, 0x0a], be32(13), 'IHDR', be32(w), be32(h), [8, 2, 0, 0, 0]);
/** SOI, an APP0 segment, a DQT-like segment, then SOF0 (or SOF2) with the dimensions. */
const jpeg = (w: number, h: number, sof = 0xc0) =>
  bytes(
    [0xff, 0xd8],
    [0xff, 0xe0],
    be16(16),
    'JFIF',
    [0, 1, 1, 0, 0, 1, 0, 1, 0, 0],
    [0xff, 0xdb],
    be16(4),
    [0, 0],
    [0xff, sof],
    be16(17),
    [8],
    be16(h),
    be16(w),
    [3],
  );

describe('readImageHeader', () => {
  it.each([
    ['png', png(640, 480), 640, 480],
    ['jpeg', jpeg(1024, 768), 1024, 768],
    ['jpeg', jpeg(33, 7, 0xc2), 33, 7],
    ['gif', bytes('GIF89a', le16(320), le16(200), [0, 0, 0]), 320, 200],
    ['webp', bytes('RIFF', le32(100), 'WEBP', 'VP8X', le32(10), [0, 0, 0, 0], [0xff, 0x01, 0], [0xc7, 0, 0]), 512, 200],
    ['bmp', bytes('BM', new Array(16).fill(0), le32(77), le32(-55)), 77, 55],
  ] as const)('reads a %s header', (format, b, w, h) => {
    const hdr = readImageHeader(b);
    expect(hdr).toMatchObject({ format, width: w, height: h });
  });

  const bad: [string, Uint8Array, RegExp][] = [
    ['text', bytes('hello, world'), /not an image/],
    ['empty', new Uint8Array(0), /not an image/],
    ['a cut PNG', png(10, 10).subarray(0, 20), /truncated/],
    ['a JPEG cut before its frame header', jpeg(10, 10).subarray(0, 30), /truncated/],
    ['a zero-width PNG', png(0, 10), /0×10/],
    ['a huge PNG side', png(100000, 10), /100000×10/],
    ['a huge PNG area', png(16000, 16000), new RegExp(String(MAX_IMAGE_PIXELS))],
    [
      'a JPEG with garbage between segments',
      bytes([0xff, 0xd8, 0xff, 0xe0], be16(4), [0, 0, 0x12, 0x34, 0, 0]),
      /corrupt/,
    ],
  ];
  it.each(bad)('%s is invalid-request', (_name, b, message) => {
    const e = thrownLlmError(() => readImageHeader(b));
    expect(e.code).toBe('invalid-request');
    expect(e.message).toMatch(message);
  });
});

describe('decodeDataUrl', () => {
  it('decodes base64 and percent-encoded payloads with their media type', () => {
    const b64 = Buffer.from(png(3, 2)).toString('base64');
    const { mime, bytes: out } = decodeDataUrl(`data:image/PNG;base64,${b64}`);
    expect(mime).toBe('image/png');
    expect(readImageHeader(out)).toMatchObject({ width: 3, height: 2 });
    expect(decodeDataUrl('data:,a%20b')).toEqual({ mime: 'text/plain', bytes: new TextEncoder().encode('a b') });
  });

  it.each([
    ['http://x/y.png', /not a data URL/],
    ['data:image/png;base64,@@@', /base64/],
    ['data:image/png,%E0%A4%A', /percent/],
  ])('%s is invalid-request', (url, message) => {
    const e = thrownLlmError(() => decodeDataUrl(url));
    expect(e.code).toBe('invalid-request');
    expect(e.message).toMatch(message);
  });
});
