/**
 * Dynamic-resolution preprocessing exactly as llama.cpp's mtmd does it for LFM2-VL (`mtmd_image_preprocessor_lfm2`
 * in `tools/mtmd/mtmd-image.cpp`): the image is resized (bilinear, aspect kept) to sides that are multiples of
 * patch × merge with its area between the projector's token limits ("smart resize", `calc_size_preserved_ratio`, in
 * f32 as mtmd). An image whose area is over twice the limit is also cut into 512² tiles on the grid (2 to 10 tiles)
 * whose aspect ratio is closest to the image's, the image resized into the grid with black padding; the smart-resized
 * image is then the thumbnail, after the tiles. Pixtral (`mtmd_image_preprocessor_dyn_size`) uses the same size rule
 * for one picture, fitted into it with black padding.
 */

import { fitAndPad, normalizeImage, type PreprocessedImage } from './preprocess-image.js';
import { type RgbImage, resizePillow } from './resize-pillow.js';
import type { VisionConfig } from './vision-config.js';

/** LFM2-VL's tiling constants (mtmd `mtmd_image_preprocessor_lfm2`, from the model's processor_config.json). */
const LFM2_TILING = { minTiles: 2, maxTiles: 10, tolerance: 2, tileSize: 512 } as const;

/** An image for a dynamic-resolution encoder: one picture, or tiles and a thumbnail. */
export interface DynamicImage {
  readonly cols: number;
  readonly rows: number;
  /** [rows · cols] 512² tiles, row-major; empty for one picture. */
  readonly tiles: readonly PreprocessedImage[];
  /** The smart-resized image: the only picture, or the thumbnail after the tiles. */
  readonly overview: PreprocessedImage;
}

const f32 = Math.fround;

/** mtmd `calc_size_preserved_ratio` (no longest edge): [width, height]. */
function smartResize(width: number, height: number, align: number, minPixels: number, maxPixels: number) {
  const roundBy = (x: number) => Math.round(f32(f32(x) / align)) * align; // std::round: positive, half up
  const ceilBy = (x: number) => Math.ceil(f32(x / align)) * align;
  const floorBy = (x: number) => Math.floor(f32(x / align)) * align;
  let w = Math.max(align, roundBy(width));
  let h = Math.max(align, roundBy(height));
  if (maxPixels > 0 && h * w > maxPixels) {
    const beta = f32(Math.sqrt(f32(f32(height * width) / maxPixels)));
    h = Math.max(align, floorBy(f32(height / beta)));
    w = Math.max(align, floorBy(f32(width / beta)));
  } else if (minPixels > 0 && h * w < minPixels) {
    const beta = f32(Math.sqrt(f32(minPixels / f32(height * width))));
    h = ceilBy(f32(height * beta));
    w = ceilBy(f32(width * beta));
  }
  return [w, h] as const;
}

/** Round half to even (C `nearbyint` in the default rounding mode). */
function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** The tile grid [cols, rows] closest to the image's aspect ratio (mtmd `find_closest_aspect_ratio`). */
function gridLayout(width: number, height: number): [number, number] {
  const { minTiles, maxTiles, tileSize } = LFM2_TILING;
  const ratios: [number, number][] = [];
  for (let n = minTiles; n <= maxTiles; n++) {
    for (let w = 1; w <= n; w++) {
      for (let h = 1; h <= n; h++) {
        if (w * h >= minTiles && w * h <= maxTiles && !ratios.some(([a, b]) => a === w && b === h)) ratios.push([w, h]);
      }
    }
  }
  ratios.sort((a, b) => a[0] * a[1] - b[0] * b[1]);
  const aspect = f32(width / height);
  const area = f32(width * height);
  let bestDiff = Number.MAX_VALUE;
  let best: [number, number] = [1, 1];
  for (const r of ratios) {
    const diff = f32(Math.abs(f32(aspect - f32(r[0] / r[1]))));
    if (diff < bestDiff) {
      bestDiff = diff;
      best = r;
    } else if (diff === bestDiff && area > 0.5 * f32(tileSize * tileSize * r[0] * r[1])) {
      best = r;
    }
  }
  return best;
}

/** Preprocesses an RGB8 image (already checked) for a dynamic-resolution encoder (lfm2). */
export function preprocessSmartResize(img: RgbImage, config: VisionConfig): DynamicImage {
  const align = config.patchSize * config.merge;
  const [minTokens, maxTokens] = config.tokenLimits;
  const [ow, oh] = smartResize(img.width, img.height, align, minTokens * align * align, maxTokens * align * align);
  const resize = (w: number, h: number) =>
    img.width === w && img.height === h ? img : resizePillow(img, w, h, config.resize);
  const overview = normalizeImage(resize(ow, oh), config);
  // mtmd `should_tile`: the image's sides rounded (half to even, in double) to whole merged patches.
  const hBar = Math.max(config.patchSize, roundHalfEven(img.height / align) * align);
  const wBar = Math.max(config.patchSize, roundHalfEven(img.width / align) * align);
  if (hBar * wBar <= maxTokens * align * align * LFM2_TILING.tolerance)
    return { cols: 0, rows: 0, tiles: [], overview };
  const [cols, rows] = gridLayout(img.width, img.height);
  const t = LFM2_TILING.tileSize;
  const refined = fitAndPad(img, cols * t, rows * t, config);
  const tiles: PreprocessedImage[] = [];
  for (let y = 0; y < rows; y++) {
    for (let x = 0; x < cols; x++) {
      const data = new Uint8Array(t * t * 3);
      for (let r = 0; r < t; r++) {
        const from = ((y * t + r) * refined.width + x * t) * 3;
        data.set(refined.data.subarray(from, from + t * 3), r * t * 3);
      }
      tiles.push(normalizeImage({ width: t, height: t, data }, config));
    }
  }
  return { cols, rows, tiles, overview };
}

/** Preprocesses an RGB8 image (already checked) for pixtral: one smart-resized picture, aspect kept, padded. */
export function preprocessDynamic(img: RgbImage, config: VisionConfig): PreprocessedImage {
  const align = config.patchSize * config.merge;
  const [minTokens, maxTokens] = config.tokenLimits;
  const [w, h] = smartResize(img.width, img.height, align, minTokens * align * align, maxTokens * align * align);
  return normalizeImage(fitAndPad(img, w, h, config), config);
}
