/**
 * PNG files of any colour type and bit depth built at test time (pngjs writes neither 16-bit grey with a key colour
 * nor tRNS): raw samples in, the encoded file out, so a decoder's answer can be checked against the samples.
 */

import { deflateSync } from 'node:zlib';

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(b: Uint8Array): number {
  let c = 0xffffffff;
  for (const x of b) c = CRC_TABLE[(c ^ x) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])));
  return Buffer.concat([head, data, crc]);
}

/** A PNG variant: samples[(y · w + x) · channels + c], each in [0, 2^depth − 1]. */
export interface PngVariant {
  readonly width: number;
  readonly height: number;
  /** 0 grey, 2 RGB, 4 grey + alpha, 6 RGBA. */
  readonly colorType: 0 | 2 | 4 | 6;
  readonly depth: 8 | 16;
  readonly samples: readonly number[];
  /** tRNS key colour (grey: 1 value, RGB: 3), raw samples. */
  readonly key?: readonly number[];
}

/** The encoded file (filter 0 on every row, not interlaced). */
export function encodePng(v: PngVariant): Uint8Array {
  const ch = { 0: 1, 2: 3, 4: 2, 6: 4 }[v.colorType];
  const bytes = v.depth / 8;
  const row = v.width * ch * bytes;
  const raw = Buffer.alloc((row + 1) * v.height);
  v.samples.forEach((s, i) => {
    const y = Math.floor(i / (v.width * ch));
    const o = y * (row + 1) + 1 + (i - y * v.width * ch) * bytes;
    if (bytes === 2) raw.writeUInt16BE(s, o);
    else raw[o] = s;
  });
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(v.width, 0);
  ihdr.writeUInt32BE(v.height, 4);
  ihdr[8] = v.depth;
  ihdr[9] = v.colorType;
  const trns = v.key ? [chunk('tRNS', Buffer.from(v.key.flatMap((k) => [k >> 8, k & 255])))] : [];
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    ...trns,
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', new Uint8Array(0)),
  ]);
}
