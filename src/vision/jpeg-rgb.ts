/**
 * stb_image's chroma upsampling (`stbi__resample_row_*`: triangle filters for 2× in either axis, nearest otherwise)
 * and colour conversion (fixed-point YCbCr, Adobe RGB, CMYK / YCCK) of decoded JPEG planes into RGB8, for the
 * baseline JPEG decoder (`jpeg-baseline.ts`).
 */

import type { RgbImage } from './resize-pillow.js';

/** One decoded component plane. */
export interface JpegPlane {
  readonly h: number;
  readonly v: number;
  /** Samples per row of the padded plane. */
  readonly w2: number;
  /** Real rows: ceil(height · v / vMax). */
  readonly y: number;
  readonly data: Uint8Array; // [h2, w2]
}

const clamp8 = (x: number) => (x < 0 ? 0 : Math.min(x, 255));

/** stb's row resamplers: `w` input samples → `w · hs` (near: the row in the same half, far: the neighbour). */
function resampleRow(
  out: Uint8Array,
  near: Uint8Array,
  far: Uint8Array,
  w: number,
  hs: number,
  vs: number,
): Uint8Array {
  if (hs === 1 && vs === 1) return near;
  if (hs === 1 && vs === 2) {
    for (let i = 0; i < w; i++) out[i] = (3 * near[i]! + far[i]! + 2) >> 2;
    return out;
  }
  if (hs === 2 && vs === 1) {
    if (w === 1) {
      out[0] = out[1] = near[0]!;
      return out;
    }
    out[0] = near[0]!;
    out[1] = (near[0]! * 3 + near[1]! + 2) >> 2;
    let i = 1;
    for (; i < w - 1; i++) {
      const n = 3 * near[i]! + 2;
      out[i * 2] = (n + near[i - 1]!) >> 2;
      out[i * 2 + 1] = (n + near[i + 1]!) >> 2;
    }
    out[i * 2] = (near[w - 2]! * 3 + near[w - 1]! + 2) >> 2;
    out[i * 2 + 1] = near[w - 1]!;
    return out;
  }
  if (hs === 2 && vs === 2) {
    if (w === 1) {
      out[0] = out[1] = (3 * near[0]! + far[0]! + 2) >> 2;
      return out;
    }
    let t1 = 3 * near[0]! + far[0]!;
    out[0] = (t1 + 2) >> 2;
    for (let i = 1; i < w; i++) {
      const t0 = t1;
      t1 = 3 * near[i]! + far[i]!;
      out[i * 2 - 1] = (3 * t0 + t1 + 8) >> 4;
      out[i * 2] = (3 * t1 + t0 + 8) >> 4;
    }
    out[w * 2 - 1] = (t1 + 2) >> 2;
    return out;
  }
  for (let i = 0; i < w; i++) for (let j = 0; j < hs; j++) out[i * hs + j] = near[i]!; // nearest
  return out;
}

const fixed = (x: number) => Math.trunc(Math.fround(x) * 4096 + 0.5) * 256;
const [CR_R, CR_G, CB_G, CB_B] = [fixed(1.402), -fixed(0.71414), -fixed(0.34414), fixed(1.772)];
const blinn = (x: number, y: number) => {
  const t = x * y + 128;
  return (t + (t >>> 8)) >>> 8;
};

/** stb's resample-and-convert loop (`load_jpeg_image`) into RGB8. */
export function toRgb(
  comps: readonly JpegPlane[],
  width: number,
  height: number,
  hMax: number,
  vMax: number,
  isRgb: boolean,
  adobeTransform: number,
): RgbImage {
  const res = comps.map((c) => {
    const hs = hMax / c.h;
    const vs = vMax / c.v;
    return {
      c,
      hs,
      vs,
      ystep: vs >> 1,
      w: Math.ceil(width / hs),
      ypos: 0,
      line0: 0,
      line1: 0,
      buf: new Uint8Array(width + 3),
    };
  });
  const rgb = new Uint8Array(width * height * 3); // [h, w, 3]
  const rows: Uint8Array[] = [];
  for (let j = 0; j < height; j++) {
    res.forEach((r, k) => {
      const bot = r.ystep >= r.vs >> 1;
      const row = (o: number) => r.c.data.subarray(o, o + r.c.w2);
      rows[k] = resampleRow(r.buf, row(bot ? r.line1 : r.line0), row(bot ? r.line0 : r.line1), r.w, r.hs, r.vs);
      if (++r.ystep >= r.vs) {
        r.ystep = 0;
        r.line0 = r.line1;
        if (++r.ypos < r.c.y) r.line1 += r.c.w2;
      }
    });
    const o = j * width * 3;
    const [y, cb, cr, k4] = rows;
    for (let i = 0; i < width; i++) {
      let R: number;
      let G: number;
      let B: number;
      if (comps.length === 1) R = G = B = y![i]!;
      else if (isRgb) [R, G, B] = [y![i]!, cb![i]!, cr![i]!];
      else if (comps.length === 4 && adobeTransform === 0) {
        const m = k4![i]!;
        [R, G, B] = [blinn(y![i]!, m), blinn(cb![i]!, m), blinn(cr![i]!, m)]; // CMYK
      } else {
        const yf = (y![i]! << 20) + (1 << 19);
        const dr = cr![i]! - 128;
        const db = cb![i]! - 128;
        R = clamp8((yf + dr * CR_R) >> 20);
        G = clamp8((yf + dr * CR_G + ((db * CB_G) & 0xffff0000)) >> 20);
        B = clamp8((yf + db * CB_B) >> 20);
        if (comps.length === 4 && adobeTransform === 2) {
          const m = k4![i]!;
          [R, G, B] = [blinn(255 - R, m), blinn(255 - G, m), blinn(255 - B, m)]; // YCCK
        }
      }
      rgb[o + i * 3] = R;
      rgb[o + i * 3 + 1] = G;
      rgb[o + i * 3 + 2] = B;
    }
  }
  return { width, height, data: rgb };
}
