/**
 * PNG and JPEG decoding where `createImageBitmap` is missing (Node), giving the pixels llama.cpp's stb_image load
 * gives: PNG through the optional dependency `pngjs` (7.0.0) with stb's 16-bit and key-colour rules applied here,
 * baseline JPEG by `jpeg-baseline.ts`, other JPEGs (progressive) through the optional `jpeg-js` (0.4.4); loaded on
 * first use so browser bundles never hold them. The header was read before (format, dimensions checked against
 * `MAX_IMAGE_PIXELS`), so nothing here decodes into unbounded memory.
 */

import { LlmError } from '../errors.js';
import type { ImageHeader } from './image-header.js';
import { decodeBaselineJpeg } from './jpeg-baseline.js';
import { MAX_IMAGE_PIXELS } from './image-header.js';
import type { RgbImage } from './resize-pillow.js';

interface Rgba {
  readonly width: number;
  readonly height: number;
  readonly data: Uint8Array; // [h, w, 4]
}

/** pngjs's answer with `skipRescale`: samples as stored (1–16 bits), expanded to RGBA; key-colour pixels zeroed. */
interface PngRgba {
  readonly width: number;
  readonly height: number;
  readonly depth: number;
  readonly colorType: number;
  /** tRNS key colour of grey (1 value) or RGB (3) images, raw samples. */
  readonly transColor?: readonly number[];
  readonly data: Uint8Array | Uint16Array; // [h, w, 4]
}

interface PngModule {
  PNG: { sync: { read(buffer: Uint8Array, options: { skipRescale: boolean }): PngRgba } };
}
interface JpegModule {
  decode(
    bytes: Uint8Array,
    opts: { useTArray: boolean; formatAsRGBA: boolean; maxMemoryUsageInMB: number; maxResolutionInMP: number },
  ): Rgba;
}

const PACKAGES = { png: 'pngjs', jpeg: 'jpeg-js' } as const;

async function load<T>(specifier: string): Promise<T> {
  try {
    const mod = (await import(/* @vite-ignore */ specifier)) as T & { default?: T };
    return mod.default ?? mod;
  } catch (cause) {
    throw new LlmError(
      'feature-missing',
      `decoding the image in this runtime needs the optional package '${specifier}' (npm install ${specifier}), or RGB pixels { width, height, data }`,
      { cause, details: { package: specifier } },
    );
  }
}

/** `bytes` as a Node Buffer (pngjs reads through Buffer methods), without a copy. */
function nodeBuffer(bytes: Uint8Array): Uint8Array {
  const B = (globalThis as { Buffer?: { from(a: ArrayBufferLike, o: number, n: number): Uint8Array } }).Buffer;
  return B ? B.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) : bytes;
}

/**
 * RGB8 pixels of a decoded PNG as stb_image's 3-channel load gives them (llama.cpp's decoder): 16-bit samples keep
 * their high byte (stb `>> 8`, not rounded), 1/2/4-bit grey scaled by 255 / max, alpha dropped, and tRNS key-colour
 * pixels keep their colour (pngjs zeroes them; their colour is the key).
 */
function pngToRgb(png: PngRgba): RgbImage {
  const { width, height, depth, colorType, data } = png;
  const palette = colorType === 3; // expanded to 8-bit entries
  const max = (1 << depth) - 1;
  const to8 = (v: number) => (palette || depth === 8 ? v : depth === 16 ? v >> 8 : (v * 255) / max);
  const key = !palette && (colorType === 0 || colorType === 2) ? png.transColor : undefined;
  const keyRgb = key === undefined ? undefined : key.length === 1 ? [key[0], key[0], key[0]] : key;
  const rgb = new Uint8Array(width * height * 3); // [h, w, 3]
  for (let i = 0, n = width * height; i < n; i++) {
    const keyed = keyRgb !== undefined && data[i * 4 + 3] === 0; // no alpha channel: only key pixels read 0
    for (let c = 0; c < 3; c++) rgb[i * 3 + c] = to8(keyed ? (keyRgb[c] ?? 0) : data[i * 4 + c]);
  }
  return { width, height, data: rgb };
}

/** RGB8 pixels of a PNG or JPEG whose header says `header`. */
export async function decodeInNode(bytes: Uint8Array, header: ImageHeader): Promise<RgbImage> {
  if (header.format !== 'png' && header.format !== 'jpeg') {
    throw new LlmError(
      'invalid-request',
      `decoding ${header.format.toUpperCase()} needs createImageBitmap (browsers and workers); in Node send PNG or JPEG`,
      { details: { format: header.format } },
    );
  }
  let rgba: Rgba;
  try {
    if (header.format === 'png') {
      const png = (await load<PngModule>(PACKAGES.png)).PNG.sync.read(nodeBuffer(bytes), { skipRescale: true });
      return pngToRgb(png);
    }
    const baseline = decodeBaselineJpeg(bytes); // stb_image's arithmetic; null: progressive and others
    if (baseline !== null) return baseline;
    rgba = (await load<JpegModule>(PACKAGES.jpeg)).decode(bytes, {
      useTArray: true,
      formatAsRGBA: true,
      maxMemoryUsageInMB: Math.ceil((MAX_IMAGE_PIXELS * 4) / 2 ** 20) + 64,
      maxResolutionInMP: Math.ceil(MAX_IMAGE_PIXELS / 1e6),
    });
  } catch (cause) {
    if (cause instanceof LlmError) throw cause;
    throw new LlmError(
      'invalid-request',
      `the ${header.format.toUpperCase()} image could not be decoded; it is corrupt or truncated`,
      {
        cause,
        details: { format: header.format },
      },
    );
  }
  const { width, height, data } = rgba;
  const rgb = new Uint8Array(width * height * 3); // [h, w, 3], alpha dropped
  for (let i = 0, n = width * height; i < n; i++) {
    rgb[i * 3] = data[i * 4];
    rgb[i * 3 + 1] = data[i * 4 + 1];
    rgb[i * 3 + 2] = data[i * 4 + 2];
  }
  return { width, height, data: rgb };
}
