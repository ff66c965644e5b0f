/**
 * What an image puts in the prompt, in order, as llama.cpp's `mtmd_tokenize` emits it: text around the image
 * (the projector's begin/end text; tiled projectors' per-tile markers, row ends and overview markers) and the
 * embedding rows of each encoded picture (one image chunk each). The preprocessor and the projector are chosen by
 * `VisionConfig` data; the projector functions live in one file each.
 */

import type { ImageGrid } from '../model/rope-streams.js';
import { throwIfAborted } from '../errors.js';
import { checkRgbImage, type PreprocessedImage, preprocessImage } from './preprocess-image.js';
import { preprocessDynamic, preprocessSmartResize } from './preprocess-smart-resize.js';
import { preprocessTiles } from './preprocess-tiles.js';
import { projectIdefics3 } from './projector-idefics3.js';
import { projectLdp } from './projector-ldp.js';
import { projectLfm2, resizePositions } from './projector-lfm2.js';
import { projectMlp } from './projector-mlp.js';
import { encodeGemma4v } from './projector-gemma4v.js';
import { encodeQwen25vl } from './projector-qwen25vl.js';
import { encodeQwen3vl } from './projector-qwen3vl.js';
import { encodePixtral } from './projector-pixtral.js';
import type { RgbImage } from './resize-pillow.js';
import { llavaFeatures } from './llava-features.js';
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
  | {
      readonly type: 'rows';
      readonly nTokens: number;
      readonly embeddings: Float32Array;
      /** The chunk's token grid, for projectors whose text model places it at grid positions (M-RoPE). */
      readonly grid?: ImageGrid;
    };

/** An image's encoder inputs: tiles (row-major, possibly none) and the overview (the only picture when no tiles). */
interface Pictures {
  readonly cols: number;
  readonly rows: number;
  readonly tiles: readonly PreprocessedImage[];
  readonly overview: PreprocessedImage;
}

const PREPROCESSORS: Readonly<Record<VisionConfig['preprocessor'], (img: RgbImage, c: VisionConfig) => Pictures>> = {
  fixed: (img, c) => ({ cols: 0, rows: 0, tiles: [], overview: preprocessImage(img, c) }),
  idefics3: preprocessTiles,
  lfm2: (img, c) => {
    checkRgbImage(img);
    return preprocessSmartResize(img, c);
  },
  dynamic: (img, c) => {
    checkRgbImage(img);
    return { cols: 0, rows: 0, tiles: [], overview: preprocessDynamic(img, c) };
  },
};

/** One picture's embeddings, [nTokens, nEmbdText], by projector type. */
type Projector = (
  w: VisionWeights,
  pic: PreprocessedImage,
  signal?: AbortSignal,
) => Float32Array | Promise<Float32Array>;

const PROJECTORS: Readonly<Record<string, Projector>> = {
  gemma3: encodeImage,
  idefics3: (w, pic, signal) =>
    projectIdefics3(w.config, w.mm, encodeVit(w, pic, signal), pic.size / w.config.patchSize, w.nEmbdText),
  lfm2: (w, pic, signal) => {
    const { patchSize: p, nEmbd: d } = w.config;
    const [gw, gh] = [pic.size / p, (pic.height ?? pic.size) / p];
    const vit = encodeVit(w, pic, signal, resizePositions(w.posEmbd, d, gw, gh));
    return projectLfm2(w.config, w.mm, vit, gw, gh, w.nEmbdText);
  },
  mlp: (w, pic, signal) => {
    const nPatches = (pic.size / w.config.patchSize) ** 2;
    const { blocks, stack } = llavaFeatures(w.config); // by default all but the last block
    const vit = encodeVit(w, pic, signal, w.posEmbd, blocks, stack);
    return projectMlp(w.config, w.mm, vit, nPatches, w.classEmbd !== undefined, w.nEmbdText);
  },
  ldp: (w, pic, signal) => {
    const nPatches = (pic.size / w.config.patchSize) ** 2;
    const { blocks, stack } = llavaFeatures(w.config); // by default all but the last block
    const vit = encodeVit(w, pic, signal, w.posEmbd, blocks, stack);
    return projectLdp(w.config, w.mm, vit, nPatches, w.classEmbd !== undefined, w.nEmbdText);
  },
  pixtral: encodePixtral,
  gemma4v: encodeGemma4v,
  'qwen2.5vl_merger': encodeQwen25vl,
  qwen3vl_merger: encodeQwen3vl,
};

const tokens = (list: readonly string[]): ImagePart[] => list.map((text) => ({ type: 'token', text }));

/**
 * The prompt pieces of `img` for an encoder of `config`, each picture (tile or overview) encoded by `encode` to
 * [nTokens, nEmbdText] rows, one after the other.
 */
export async function layoutImageParts(
  config: VisionConfig,
  img: RgbImage,
  nEmbdText: number,
  encode: (pic: PreprocessedImage) => Float32Array | Promise<Float32Array>,
  signal?: AbortSignal,
): Promise<ImagePart[]> {
  const pics = PREPROCESSORS[config.preprocessor](img, config);
  const rows = async (pic: PreprocessedImage): Promise<ImagePart> => {
    throwIfAborted(signal, 'encoding the image');
    const embeddings = await encode(pic);
    const m = config.patchSize * config.merge; // M-RoPE text models place the rows by the merged grid
    const [nx, ny] = [pic.size / m, (pic.height ?? pic.size) / m];
    const grid = config.mrope ? { grid: { nx, ny } } : {};
    // (qwen3vl's rows also carry deepstack blocks: n_embd · (1 + k) wide, so the grid counts them)
    return { type: 'rows', nTokens: config.mrope ? nx * ny : embeddings.length / nEmbdText, embeddings, ...grid };
  };
  const parts: ImagePart[] = [];
  if (config.imageBegin !== '') parts.push({ type: 'text', text: config.imageBegin });
  if (pics.tiles.length === 0) parts.push(await rows(pics.overview));
  else {
    const marks = config.tiles!;
    for (let y = 0; y < pics.rows; y++) {
      for (let x = 0; x < pics.cols; x++) {
        const text = marks.tileStart.replace('{row}', String(y + 1)).replace('{col}', String(x + 1));
        parts.push({ type: 'text', text }, await rows(pics.tiles[y * pics.cols + x]));
      }
      if (y !== pics.rows - 1) parts.push(...tokens(marks.rowEnd));
    }
    parts.push(...tokens(marks.overviewStart), await rows(pics.overview), ...tokens(marks.overviewEnd));
  }
  if (config.imageEnd !== '') parts.push({ type: 'text', text: config.imageEnd });
  return parts;
}

/** The prompt pieces of `img` encoded by `w` on the plain-TS reference. */
export function encodeImageParts(w: VisionWeights, img: RgbImage, signal?: AbortSignal): Promise<ImagePart[]> {
  const project = PROJECTORS[w.config.projector];
  return layoutImageParts(w.config, img, w.nEmbdText, (pic) => project(w, pic, signal), signal);
}
