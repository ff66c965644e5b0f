import { createHash } from 'node:crypto';
import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { decodeImage } from '../../../src/vision/decode-image.js';
import { expectLlmError } from '../../helpers/llm-error.js';
import { encodePng, type PngVariant } from '../../helpers/png-variants.js';

/** A PNG signature and IHDR of w × h: enough for the header check (the stubbed decoder never reads the rest). */
function pngHeader(w: number, h: number): Uint8Array {
  const b = new Uint8Array(33);
  b.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
  new DataView(b.buffer).setUint32(16, w);
  new DataView(b.buffer).setUint32(20, h);
  return b;
}
const dataUrl = (b: Uint8Array) => `data:image/png;base64,${Buffer.from(b).toString('base64')}`;

/** Stubs createImageBitmap and OffscreenCanvas: a w × h bitmap whose RGBA pixel i is (i, i+1, i+2, 7). */
function stubDecoder(w: number, h: number) {
  const calls: unknown[] = [];
  const close = vi.fn();
  vi.stubGlobal('createImageBitmap', async (blob: Blob, opts: unknown) => {
    calls.push(opts, blob.size);
    return { width: w, height: h, close };
  });
  vi.stubGlobal(
    'OffscreenCanvas',
    class {
      getContext() {
        return {
          drawImage: () => {},
          getImageData: () => ({
            data: Uint8ClampedArray.from({ length: w * h * 4 }, (_, j) => (j % 4 === 3 ? 7 : (j >> 2) + (j % 4))),
          }),
        };
      }
    },
  );
  return { calls, close };
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('decodeImage', () => {
  it('passes RGB pixels through and drops ImageData alpha', async () => {
    const rgb = { width: 1, height: 1, data: new Uint8Array([1, 2, 3]) };
    expect(await decodeImage(rgb)).toBe(rgb);
    const imageData = {
      width: 2,
      height: 1,
      colorSpace: 'srgb',
      data: new Uint8ClampedArray([1, 2, 3, 4, 5, 6, 7, 8]),
    };
    expect((await decodeImage(imageData as unknown as ImageData)).data).toEqual(new Uint8Array([1, 2, 3, 5, 6, 7]));
  });

  it('decodes a data URL through createImageBitmap without premultiplying or colour conversion', async () => {
    const { calls, close } = stubDecoder(2, 2);
    const img = await decodeImage(dataUrl(pngHeader(2, 2)));
    expect(calls[0]).toEqual({ premultiplyAlpha: 'none', colorSpaceConversion: 'none' });
    expect(img).toEqual({ width: 2, height: 2, data: new Uint8Array([0, 1, 2, 1, 2, 3, 2, 3, 4, 3, 4, 5]) });
    expect(close).toHaveBeenCalled();
  });

  it('rejects bad input before decoding', async () => {
    const { calls } = stubDecoder(2, 2);
    await expectLlmError(
      decodeImage(dataUrl(new TextEncoder().encode('plain text'))),
      'invalid-request',
      /not an image/,
    );
    await expectLlmError(decodeImage(pngHeader(0, 5)), 'invalid-request', /0×5/);
    await expectLlmError(decodeImage('ftp://example.com/a.png'), 'invalid-request', /data: or http/);
    await expectLlmError(decodeImage({} as unknown as Blob), 'invalid-request', /not an image input/);
    expect(calls).toEqual([]);
  });

  it('reports a decoder failure as invalid-request, on the Node path too', async () => {
    vi.stubGlobal('createImageBitmap', async () => {
      throw new Error('InvalidStateError');
    });
    await expectLlmError(decodeImage(pngHeader(4, 4)), 'invalid-request', /corrupt or truncated/);
    vi.stubGlobal('createImageBitmap', undefined);
    await expectLlmError(decodeImage(pngHeader(4, 4)), 'invalid-request', /PNG image could not be decoded/);
  });
});

describe('decodeImage in Node (pngjs / jpeg-js)', () => {
  afterEach(() => vi.unstubAllGlobals());
  const w = 5;
  const h = 3;
  const rgba = Uint8Array.from({ length: w * h * 4 }, (_, i) => (i % 4 === 3 ? 255 : (i * 37) % 256)); // [h, w, 4]
  const rgb = rgba.filter((_, i) => i % 4 !== 3); // [h, w, 3]

  it('decodes a PNG data URL and a PNG Blob to the exact pixels', async () => {
    vi.stubGlobal('createImageBitmap', undefined);
    const png = PNG.sync.write(Object.assign(new PNG({ width: w, height: h }), { data: Buffer.from(rgba) }));
    for (const input of [`data:image/png;base64,${png.toString('base64')}`, new Blob([new Uint8Array(png)])]) {
      const img = await decodeImage(input);
      expect([img.width, img.height]).toEqual([w, h]);
      expect(Array.from(img.data)).toEqual(Array.from(rgb));
    }
  });

  it("decodes 16-bit, grey and key-coloured PNGs in Node as llama.cpp's stb_image does (high byte, key colour kept)", async () => {
    // Checked against stb_image's 3-channel load (llama.cpp's decoder): 16-bit samples keep their high byte (pngjs
    // had rounded v · 255 / 65535), tRNS key-colour pixels keep their colour (pngjs had zeroed them), alpha dropped.
    const w = 7;
    const h = 5;
    let seed = 17;
    const rnd = (max: number) => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return (seed >>> 8) % (max + 1);
    };
    const cases: { v: PngVariant; rgb: (s: readonly number[], i: number) => number[] }[] = [];
    const grey = (s: readonly number[], i: number, ch: number, shift: number) =>
      [0, 0, 0].map(() => s[i * ch]! >> shift);
    const rgb = (s: readonly number[], i: number, ch: number, shift: number) =>
      [0, 1, 2].map((c) => s[i * ch + c]! >> shift);
    const make = (colorType: PngVariant['colorType'], depth: 8 | 16, ch: number, key?: number[]) => {
      const samples = Array.from({ length: w * h * ch }, (_, j) =>
        key && j % (2 * ch) < ch ? key[j % key.length]! : rnd(depth === 16 ? 65535 : 255),
      );
      return { width: w, height: h, colorType, depth, samples, ...(key ? { key } : {}) };
    };
    const shift16 = 8;
    cases.push({ v: make(2, 16, 3), rgb: (s, i) => rgb(s, i, 3, shift16) });
    cases.push({ v: make(6, 16, 4), rgb: (s, i) => rgb(s, i, 4, shift16) });
    cases.push({ v: make(0, 16, 1), rgb: (s, i) => grey(s, i, 1, shift16) });
    cases.push({ v: make(4, 16, 2), rgb: (s, i) => grey(s, i, 2, shift16) });
    cases.push({ v: make(2, 8, 3, [10, 20, 30]), rgb: (s, i) => rgb(s, i, 3, 0) });
    cases.push({ v: make(0, 16, 1, [40000]), rgb: (s, i) => grey(s, i, 1, shift16) });
    for (const { v, rgb: expected } of cases) {
      const got = await decodeImage(encodePng(v));
      const want = Uint8Array.from(Array.from({ length: w * h }, (_, i) => expected(v.samples, i)).flat());
      expect([got.width, got.height], `type ${v.colorType} depth ${v.depth}`).toEqual([w, h]);
      expect(Array.from(got.data), `type ${v.colorType} depth ${v.depth}${v.key ? ' key' : ''}`).toEqual(
        Array.from(want),
      );
    }
  });

  it("decodes a baseline JPEG in Node bit-identically to llama.cpp's stb_image, EXIF orientation ignored as stb does", async () => {
    // sha256 of stb_image's 3-channel load of this file (stb from the llama.cpp snapshot, SSE2 build): its integer
    // IDCT, fancy upsampling and fixed-point YCbCr (jpeg-js had differed on 51 % of the samples, by up to 3).
    vi.stubGlobal('createImageBitmap', undefined);
    const [w, h] = [61, 45];
    const rgba = new Uint8Array(w * h * 4);
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++)
        rgba.set([(x * 4) & 255, (y * 5 + x) & 255, ((x * y) >> 2) & 255, 255], (y * w + x) * 4);
    const jpg = jpeg.encode({ data: rgba, width: w, height: h }, 90).data;
    // The same file with an EXIF APP1 saying "rotate 90°" (orientation 6) right after SOI.
    const tiff = [0x4d, 0x4d, 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0];
    const body = [...Buffer.from('Exif\0\0', 'latin1'), ...tiff];
    const exif = Uint8Array.from([...jpg.subarray(0, 2), 0xff, 0xe1, 0, body.length + 2, ...body, ...jpg.subarray(2)]);
    for (const file of [jpg, exif]) {
      const img = await decodeImage(new Uint8Array(file));
      expect([img.width, img.height]).toEqual([w, h]);
      expect(createHash('sha256').update(img.data).digest('hex')).toBe(
        'a161afbfab8cccbd4016cb0ee6f2659f1abd84765afe87ea6746c915addb20b2',
      );
    }
  });

  it('decodes a JPEG to its size and near its pixels; a cut JPEG is invalid-request', async () => {
    vi.stubGlobal('createImageBitmap', undefined);
    const flat = new Uint8Array(16 * 8 * 4).fill(200); // a flat grey survives JPEG almost exactly
    const jpg = jpeg.encode({ data: flat, width: 16, height: 8 }, 95).data;
    const img = await decodeImage(new Uint8Array(jpg));
    expect([img.width, img.height]).toEqual([16, 8]);
    for (const v of img.data) expect(Math.abs(v - 200)).toBeLessThanOrEqual(2);
    await expectLlmError(decodeImage(new Uint8Array(jpg.subarray(0, 200))), 'invalid-request', /JPEG/);
  });
});
