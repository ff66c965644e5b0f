/**
 * PNG and JPEG decoding where `createImageBitmap` is missing (Node): the optional dependencies `pngjs` (7.0.0) and
 * `jpeg-js` (0.4.4), loaded on first use so browser bundles never hold them. The header was read before (format,
 * dimensions checked against `MAX_IMAGE_PIXELS`), so nothing here decodes into unbounded memory.
 */

import { LlmError } from '../errors.js';
import type { ImageHeader } from './image-header.js';
import { MAX_IMAGE_PIXELS } from './image-header.js';
import type { RgbImage } from './resize-pillow.js';

interface Rgba {
  readonly width: number;
  readonly height: number;
  readonly data: Uint8Array; // [h, w, 4]
}

interface PngModule {
  PNG: { sync: { read(buffer: Uint8Array): Rgba } };
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
    if (header.format === 'png') rgba = (await load<PngModule>(PACKAGES.png)).PNG.sync.read(nodeBuffer(bytes));
    else
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
