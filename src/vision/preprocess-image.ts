/**
 * Image preprocessing exactly as llama.cpp's mtmd does it for fixed-size encoders (`mtmd_image_preprocessor_fixed_size`
 * in `tools/mtmd/mtmd-image.cpp`, used by `gemma3`): the image is scaled to fit `imageSize`² keeping its aspect ratio
 * (Pillow-compatible resampling, sides rounded up), centred on black padding, scaled to [0, 1], normalised with the
 * mmproj's per-channel mean and std in f32, and laid out channel-major — the encoder's `inp_raw` tensor.
 */

import { LlmError } from '../errors.js';
import { type RgbImage, resizePillow } from './resize-pillow.js';
import type { VisionConfig } from './vision-config.js';

/** Largest side of an input image, in pixels; decoders downscale or refuse anything larger. */
export const MAX_IMAGE_SIDE = 16384;

/** The encoder's input: f32 [3, height, size] (channel-major), values normalised. */
export interface PreprocessedImage {
  /** Width in pixels (the side of a square input). */
  readonly size: number;
  /** Height in pixels when it differs from `size` (dynamic-resolution encoders: lfm2). */
  readonly height?: number;
  /** [3, height, size] */
  readonly pixels: Float32Array;
}

/** `invalid-request` unless `img` is a well-formed RGB8 image of bounded size. */
export function checkRgbImage(img: RgbImage): void {
  const { width, height, data } = img;
  for (const [name, v] of [
    ['width', width],
    ['height', height],
  ] as const) {
    if (!Number.isSafeInteger(v) || v < 1 || v > MAX_IMAGE_SIDE) {
      throw new LlmError('invalid-request', `image ${name} is ${v}; it must be an integer in [1, ${MAX_IMAGE_SIDE}]`, {
        details: { field: name, value: Number.isFinite(v) ? v : String(v), limit: MAX_IMAGE_SIDE },
      });
    }
  }
  if (!(data instanceof Uint8Array) || data.length !== width * height * 3) {
    throw new LlmError(
      'invalid-request',
      `image data holds ${data instanceof Uint8Array ? data.length : 'no'} bytes; a ${width}×${height} RGB8 image needs ${width * height * 3}`,
      { details: { field: 'data', width, height } },
    );
  }
}

/**
 * Scales `img` to fit `width` × `height` (aspect kept, sides rounded up) and centres it on black (llama.cpp
 * `img_tool::resize` with `PAD_CEIL`), or on the projector's pad colour (llava).
 */
export function fitAndPad(img: RgbImage, width: number, height: number, config: VisionConfig): RgbImage {
  if (img.width === width && img.height === height) return img;
  // f32 arithmetic as in img_tool::resize: scale = min(width / w, height / h) in float.
  const scale = Math.min(Math.fround(width / img.width), Math.fround(height / img.height));
  const newW = Math.min(Math.ceil(Math.fround(img.width * scale)), width);
  const newH = Math.min(Math.ceil(Math.fround(img.height * scale)), height);
  const resized = resizePillow(img, newW, newH, config.resize);
  const data = new Uint8Array(width * height * 3);
  const [pr, pg, pb] = config.padColor;
  if (pr !== 0 || pg !== 0 || pb !== 0) {
    for (let i = 0; i < data.length; i += 3) {
      data[i] = pr;
      data[i + 1] = pg;
      data[i + 2] = pb;
    }
  }
  const ox = Math.trunc((width - newW) / 2);
  const oy = Math.trunc((height - newH) / 2);
  for (let y = 0; y < newH; y++) {
    data.set(resized.data.subarray(y * newW * 3, (y + 1) * newW * 3), ((oy + y) * width + ox) * 3);
  }
  return { width, height, data };
}

/** An RGB8 image scaled to [0, 1] and normalised with the config's mean/std, channel-major. */
export function normalizeImage(img: RgbImage, config: VisionConfig): PreprocessedImage {
  const size = img.width;
  const plane = size * img.height;
  const pixels = new Float32Array(3 * plane);
  const { imageMean: mean, imageStd: std } = config;
  for (let i = 0; i < plane; i++) {
    for (let c = 0; c < 3; c++) {
      // clip_image_f32::from_u8 then normalize, each step rounded to f32.
      const x = Math.fround(img.data[i * 3 + c] / 255);
      pixels[c * plane + i] = Math.fround(Math.fround(x - mean[c]) / std[c]);
    }
  }
  return img.height === size ? { size, pixels } : { size, height: img.height, pixels };
}

/** Preprocesses an RGB8 image for a fixed-size encoder (gemma3). */
export function preprocessImage(img: RgbImage, config: VisionConfig): PreprocessedImage {
  checkRgbImage(img);
  return normalizeImage(fitAndPad(img, config.imageSize, config.imageSize, config), config);
}
