/**
 * Pillow-compatible separable resampling of RGB8 images (bilinear, bicubic a = −0.5, Lanczos-3), bit-exact with
 * llama.cpp's `img_tool::resize_pillow` (`tools/mtmd/mtmd-image.cpp`, after Pillow's `Resample.c`): filter weights in
 * double, normalised per output pixel, rounded to 22-bit fixed point; a horizontal pass, then a vertical pass, each
 * rounding and clamping to 8 bits.
 */

import { LlmError } from '../errors.js';
import type { ResizeAlgorithm } from './vision-config.js';

/** An RGB8 image: `data` is row-major RGBRGB…, `width · height · 3` bytes. */
export interface RgbImage {
  readonly width: number;
  readonly height: number;
  readonly data: Uint8Array;
}

/** The largest side `img_tool::resize_pillow` resizes to. */
const MAX_RESIZE_SIDE = 65536;

/** 32 bits − 8 (pixel) − 2 (headroom): the fixed-point fraction of the weights. */
const PRECISION_BITS = 22;
const HALF = 1 << (PRECISION_BITS - 1);

/** Support radius of each filter, in input pixels at scale 1. */
const SUPPORT: Readonly<Record<ResizeAlgorithm, number>> = { bilinear: 1, bicubic: 2, lanczos: 3 };

function sinc(v: number): number {
  if (v === 0) return 1;
  const piV = v * Math.PI;
  return Math.sin(piV) / piV;
}

/** The filter weight at distance `x` from the output pixel's centre. */
function filter(algo: ResizeAlgorithm, x: number): number {
  if (algo === 'lanczos') return -3 <= x && x < 3 ? sinc(x) * sinc(x / 3) : 0;
  const ax = x < 0 ? -x : x;
  if (algo === 'bilinear') return ax < 1 ? 1 - ax : 0;
  const a = -0.5;
  if (ax < 1) return ((a + 2) * ax - (a + 3)) * ax * ax + 1;
  if (ax < 2) return (((ax - 5) * ax + 8) * ax - 4) * a;
  return 0;
}

/** Per output pixel: first input index, count, and `ksize` fixed-point weights. */
interface Coefficients {
  readonly ksize: number;
  /** [outSize · 2]: xmin, xcnt */
  readonly bounds: Int32Array;
  /** [outSize · ksize] */
  readonly weights: Int32Array;
}

function coefficients(inSize: number, outSize: number, algo: ResizeAlgorithm): Coefficients {
  const scale = inSize / outSize;
  const filterscale = Math.max(1, scale);
  const support = SUPPORT[algo] * filterscale;
  const ksize = Math.ceil(support) * 2 + 1;
  const bounds = new Int32Array(outSize * 2);
  const weights = new Int32Array(outSize * ksize);
  const pre = new Float64Array(ksize);
  const fxp = 2 ** PRECISION_BITS;
  for (let xx = 0; xx < outSize; xx++) {
    const center = (xx + 0.5) * scale;
    const ss = 1 / filterscale;
    const xmin = Math.max(0, Math.trunc(center - support + 0.5));
    const xcnt = Math.min(inSize, Math.trunc(center + support + 0.5)) - xmin;
    let ww = 0;
    pre.fill(0);
    for (let x = 0; x < xcnt; x++) {
      const w = filter(algo, (x + xmin - center + 0.5) * ss);
      pre[x] = w;
      ww += w;
    }
    for (let x = 0; x < ksize; x++) {
      const w = x < xcnt && ww !== 0 ? pre[x] / ww : x < xcnt ? pre[x] : 0;
      // Pillow adds ±0.5 and truncates toward zero.
      weights[xx * ksize + x] = Math.trunc(w * fxp + (w < 0 ? -0.5 : 0.5));
    }
    bounds[xx * 2] = xmin;
    bounds[xx * 2 + 1] = xcnt;
  }
  return { ksize, bounds, weights };
}

const clip8 = (v: number): number => Math.min(255, Math.max(0, v));

/** Resamples each row from `inW` to `outW` pixels. src: [h, inW, 3] → [h, outW, 3]. */
function horizontal(src: Uint8Array, inW: number, h: number, outW: number, c: Coefficients): Uint8Array {
  const out = new Uint8Array(outW * h * 3);
  for (let y = 0; y < h; y++) {
    const row = y * inW * 3;
    for (let xx = 0; xx < outW; xx++) {
      const xmin = c.bounds[xx * 2];
      const xcnt = c.bounds[xx * 2 + 1];
      const k = xx * c.ksize;
      let s0 = HALF;
      let s1 = HALF;
      let s2 = HALF;
      for (let x = 0; x < xcnt; x++) {
        const p = row + (xmin + x) * 3;
        const w = c.weights[k + x];
        s0 += src[p] * w;
        s1 += src[p + 1] * w;
        s2 += src[p + 2] * w;
      }
      const o = (y * outW + xx) * 3;
      out[o] = clip8(s0 >> PRECISION_BITS);
      out[o + 1] = clip8(s1 >> PRECISION_BITS);
      out[o + 2] = clip8(s2 >> PRECISION_BITS);
    }
  }
  return out;
}

/** Resamples each column from `inH` to `outH` rows. src: [inH, w, 3] → [outH, w, 3]. */
function vertical(src: Uint8Array, w: number, outH: number, c: Coefficients): Uint8Array {
  const rowElems = w * 3;
  const out = new Uint8Array(rowElems * outH);
  const acc = new Int32Array(rowElems);
  for (let yy = 0; yy < outH; yy++) {
    const ymin = c.bounds[yy * 2];
    const ycnt = c.bounds[yy * 2 + 1];
    acc.fill(HALF);
    for (let y = 0; y < ycnt; y++) {
      const row = (ymin + y) * rowElems;
      const wt = c.weights[yy * c.ksize + y];
      for (let i = 0; i < rowElems; i++) acc[i] += src[row + i] * wt;
    }
    const o = yy * rowElems;
    for (let i = 0; i < rowElems; i++) out[o + i] = clip8(acc[i] >> PRECISION_BITS);
  }
  return out;
}

/** `img` resized to `width` × `height`; a side outside [1, 65536] is `invalid-request`, as mtmd refuses it. */
export function resizePillow(img: RgbImage, width: number, height: number, algo: ResizeAlgorithm): RgbImage {
  // mtmd's sanity check on the target (an extreme aspect ratio rounds a side to 0): the image is refused.
  if (!(width >= 1 && width <= MAX_RESIZE_SIDE && height >= 1 && height <= MAX_RESIZE_SIDE)) {
    throw new LlmError(
      'invalid-request',
      `the ${img.width}×${img.height} image would be resized to ${width}×${height}, out of range (1 to ${MAX_RESIZE_SIDE} a side): its aspect ratio is too extreme for this projector`,
      { details: { width: img.width, height: img.height, targetWidth: width, targetHeight: height } },
    );
  }
  let data = img.data;
  if (width !== img.width) data = horizontal(data, img.width, img.height, width, coefficients(img.width, width, algo));
  if (height !== img.height) data = vertical(data, width, height, coefficients(img.height, height, algo));
  return { width, height, data: data === img.data ? data.slice() : data };
}
