/**
 * Tiled image preprocessing exactly as llama.cpp's mtmd does it for Idefics3 / SmolVLM
 * (`mtmd_image_preprocessor_idefics3` in `tools/mtmd/mtmd-image.cpp`, the `clip.vision.preproc_image_size` path):
 * the image is resized (aspect kept, the short side truncated then rounded up to even) so its longest side is
 * `longestEdge`, resized again (aspect not kept) to whole `imageSize` tiles, cut into those tiles row by row, and the
 * tiled picture squeezed to one tile for the overview. Each tile is normalised as the fixed-size path does.
 */

import type { PreprocessedImage } from './preprocess-image.js';
import { checkRgbImage, normalizeImage } from './preprocess-image.js';
import { type RgbImage, resizePillow } from './resize-pillow.js';
import type { VisionConfig } from './vision-config.js';

/** An image cut into tiles plus its overview, each an `imageSize`² encoder input. */
export interface TiledImage {
  readonly cols: number;
  readonly rows: number;
  /** [rows · cols], row-major. */
  readonly tiles: readonly PreprocessedImage[];
  readonly overview: PreprocessedImage;
}

/** `img` resized to w × h (a copy when the size already matches, as `img_tool::resize`). */
function resizeTo(img: RgbImage, w: number, h: number, config: VisionConfig): RgbImage {
  return img.width === w && img.height === h ? img : resizePillow(img, w, h, config.resize);
}

/** The `size`² tile of `img` whose top-left corner is (x, y). */
function crop(img: RgbImage, x: number, y: number, size: number): RgbImage {
  const data = new Uint8Array(size * size * 3);
  for (let r = 0; r < size; r++) {
    const from = ((y + r) * img.width + x) * 3;
    data.set(img.data.subarray(from, from + size * 3), r * size * 3);
  }
  return { width: size, height: size, data };
}

/** The size mtmd resizes to first: longest side `edge`, the other side truncated and rounded up to even. */
function longestEdgeSize(width: number, height: number, edge: number): [number, number] {
  const aspect = width / height; // double, as mtmd
  // An aspect ratio over `edge` truncates the short side to 0: `resizePillow` then refuses it, as mtmd does.
  const even = (n: number) => n + (n % 2);
  return width >= height ? [edge, even(Math.trunc(edge / aspect))] : [even(Math.trunc(edge * aspect)), edge];
}

/** Preprocesses an RGB8 image for a tiled encoder (idefics3). */
export function preprocessTiles(img: RgbImage, config: VisionConfig): TiledImage {
  checkRgbImage(img);
  const tile = config.imageSize;
  const [rw, rh] = longestEdgeSize(img.width, img.height, config.longestEdge);
  const cols = Math.ceil(rw / tile);
  const rows = Math.ceil(rh / tile);
  const resized = resizeTo(img, rw, rh, config);
  const refined = resizeTo(resized, cols * tile, rows * tile, config);
  const overview = normalizeImage(resizeTo(refined, tile, tile, config), config);
  const tiles: PreprocessedImage[] = [];
  for (let y = 0; y < rows; y++) {
    for (let x = 0; x < cols; x++) tiles.push(normalizeImage(crop(refined, x * tile, y * tile, tile), config));
  }
  return { cols, rows, tiles, overview };
}
