/**
 * What an image puts in the prompt, in order, as llama.cpp's `mtmd_tokenize` emits it: text around the image
 * (the projector's begin/end text; tiled projectors' per-tile markers, row ends and overview markers) and the
 * embedding rows of each encoded picture (one image chunk each). Built per preprocessor from `VisionConfig` data.
 */

import { throwIfAborted } from '../errors.js';
import { preprocessImage } from './preprocess-image.js';
import { preprocessTiles } from './preprocess-tiles.js';
import { projectIdefics3 } from './projector-idefics3.js';
import type { RgbImage } from './resize-pillow.js';
import { encodeImage, encodeVit } from './siglip-encoder.js';
import type { VisionConfig } from './vision-config.js';
import type { VisionWeights } from './vision-weights.js';

/**
 * One piece of an image's prompt: `text` is tokenized alone with special tokens parsed; `token` is one vocabulary
 * token whose text is exactly `text` (mtmd `lookup_token`); `rows` is an image chunk, [nTokens, nEmbdText] f32.
 */
export type ImagePart =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'token'; readonly text: string }
  | { readonly type: 'rows'; readonly nTokens: number; readonly embeddings: Float32Array };

const tokens = (list: readonly string[]): ImagePart[] => list.map((text) => ({ type: 'token', text }));
const rows = (embeddings: Float32Array, nEmbdText: number): ImagePart => ({
  type: 'rows',
  nTokens: embeddings.length / nEmbdText,
  embeddings,
});

/** The prompt pieces of `img` encoded by `w`. */
export function encodeImageParts(w: VisionWeights, img: RgbImage, signal?: AbortSignal): ImagePart[] {
  const config: VisionConfig = w.config;
  const n = w.nEmbdText;
  if (config.preprocessor === 'fixed') {
    const parts: ImagePart[] = [];
    if (config.imageBegin !== '') parts.push({ type: 'text', text: config.imageBegin });
    parts.push(rows(encodeImage(w, preprocessImage(img, config), signal), n));
    if (config.imageEnd !== '') parts.push({ type: 'text', text: config.imageEnd });
    return parts;
  }
  const tiled = preprocessTiles(img, config);
  const marks = config.tiles!;
  const side = config.imageSize / config.patchSize;
  const encodeTile = (t: (typeof tiled.tiles)[number]) => {
    throwIfAborted(signal, 'encoding the image');
    return projectIdefics3(config, w.mm, encodeVit(w, t, signal), side, n);
  };
  const parts: ImagePart[] = [];
  for (let y = 0; y < tiled.rows; y++) {
    for (let x = 0; x < tiled.cols; x++) {
      const text = marks.tileStart.replace('{row}', String(y + 1)).replace('{col}', String(x + 1));
      parts.push({ type: 'text', text }, rows(encodeTile(tiled.tiles[y * tiled.cols + x]), n));
    }
    if (y !== tiled.rows - 1) parts.push(...tokens(marks.rowEnd));
  }
  parts.push(...tokens(marks.overviewStart), rows(encodeTile(tiled.overview), n), ...tokens(marks.overviewEnd));
  return parts;
}
