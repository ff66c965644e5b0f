/**
 * Image inputs to RGB8 pixels without a DOM (browsers and workers): `Blob`, bytes, `data:` or http(s) URLs are checked
 * by their header first (`image-header.ts`: not an image, truncated, zero or huge dimensions are `invalid-request`
 * before anything is decoded), then decoded with `createImageBitmap` and read back through an `OffscreenCanvas`;
 * `ImageBitmap` and `ImageData` are read directly; `RgbImage` passes through. Alpha is dropped, not composited, and no
 * colour-space conversion is applied — as llama.cpp's stb_image load with 3 channels does. In Node (no
 * `createImageBitmap`) PNG and JPEG go through the optional `pngjs` / `jpeg-js` (`node-image-decoder.ts`).
 */

import { LlmError, throwIfAborted } from '../errors.js';
import { decodeDataUrl } from './data-url.js';
import { IMAGE_HEADER_BYTES, MAX_IMAGE_PIXELS, readImageHeader } from './image-header.js';
import type { RgbImage } from './resize-pillow.js';

/** What an image content part may carry. */
export type ImageInput = RgbImage | Blob | ImageBitmap | ImageData | Uint8Array | string;

/** RGBA → RGB (alpha dropped). rgba: [h, w, 4] → [h, w, 3]. */
function rgbaToRgb(width: number, height: number, rgba: Uint8ClampedArray | Uint8Array): RgbImage {
  const n = width * height;
  const data = new Uint8Array(n * 3);
  for (let i = 0; i < n; i++) {
    data[i * 3] = rgba[i * 4];
    data[i * 3 + 1] = rgba[i * 4 + 1];
    data[i * 3 + 2] = rgba[i * 4 + 2];
  }
  return { width, height, data };
}

function checkArea(width: number, height: number, what: string): void {
  if (!(width >= 1 && height >= 1 && width * height <= MAX_IMAGE_PIXELS)) {
    throw new LlmError(
      'invalid-request',
      `the ${what} is ${width}×${height}; it must be non-empty and at most ${MAX_IMAGE_PIXELS} pixels`,
      {
        details: { width, height, limit: MAX_IMAGE_PIXELS },
      },
    );
  }
}

/** Pixels of a decoded bitmap, read through an OffscreenCanvas. */
function readBitmap(bitmap: ImageBitmap): RgbImage {
  const { width, height } = bitmap;
  checkArea(width, height, 'ImageBitmap');
  if (typeof OffscreenCanvas !== 'function') {
    throw new LlmError('invalid-request', 'reading an ImageBitmap needs OffscreenCanvas, which this runtime lacks');
  }
  const ctx = new OffscreenCanvas(width, height).getContext('2d');
  if (ctx === null) throw new LlmError('invalid-request', 'OffscreenCanvas has no 2d context in this runtime');
  ctx.drawImage(bitmap, 0, 0);
  return rgbaToRgb(width, height, ctx.getImageData(0, 0, width, height).data);
}

async function decodeBlob(blob: Blob, signal?: AbortSignal): Promise<RgbImage> {
  const header = readImageHeader(new Uint8Array(await blob.slice(0, IMAGE_HEADER_BYTES).arrayBuffer()));
  throwIfAborted(signal, 'decoding the image');
  if (typeof createImageBitmap !== 'function') {
    const { decodeInNode } = await import('./node-image-decoder.js'); // Node: pngjs / jpeg-js
    return decodeInNode(new Uint8Array(await blob.arrayBuffer()), header);
  }
  let bitmap: ImageBitmap;
  try {
    bitmap = await createImageBitmap(blob, { premultiplyAlpha: 'none', colorSpaceConversion: 'none' });
  } catch (cause) {
    throw new LlmError('invalid-request', 'the image could not be decoded; it is corrupt or truncated', { cause });
  }
  try {
    return readBitmap(bitmap);
  } finally {
    bitmap.close();
  }
}

const isRgbImage = (x: object): x is RgbImage =>
  'data' in x && x.data instanceof Uint8Array && !('colorSpace' in x) && 'width' in x && 'height' in x;

/** RGB8 pixels of an image input. */
export async function decodeImage(input: ImageInput, signal?: AbortSignal): Promise<RgbImage> {
  throwIfAborted(signal, 'decoding the image');
  if (typeof input === 'string') {
    if (input.startsWith('data:')) {
      const { mime, bytes } = decodeDataUrl(input);
      return decodeBlob(new Blob([bytes], { type: mime }), signal);
    }
    if (/^https?:\/\//i.test(input)) {
      let res: Response;
      try {
        res = await fetch(input, { signal });
      } catch (cause) {
        throw new LlmError('network', `fetching the image ${input} failed`, { details: { url: input }, cause });
      }
      if (!res.ok)
        throw new LlmError('network', `fetching the image ${input}: HTTP ${res.status}`, {
          details: { url: input, status: res.status },
        });
      return decodeBlob(await res.blob(), signal);
    }
    throw new LlmError('invalid-request', `an image URL must be data: or http(s):, got '${input.slice(0, 40)}'`, {
      details: { field: 'image_url.url' },
    });
  }
  if (input instanceof Uint8Array) return decodeBlob(new Blob([input.slice()]), signal);
  if (typeof Blob === 'function' && input instanceof Blob) return decodeBlob(input, signal);
  if (typeof ImageBitmap === 'function' && input instanceof ImageBitmap) return readBitmap(input);
  if (isRgbImage(input)) return input;
  if ('colorSpace' in input && input.data instanceof Uint8ClampedArray) {
    checkArea(input.width, input.height, 'ImageData');
    return rgbaToRgb(input.width, input.height, input.data);
  }
  throw new LlmError(
    'invalid-request',
    'not an image input: expected a Blob, ImageBitmap, ImageData, bytes, URL or RGB pixels',
  );
}
