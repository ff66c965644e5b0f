/**
 * The one entry point of image input on the reference path: open an mmproj (`loadVisionEncoder`: header, config,
 * weights checked against the text model's n_embd), then `encode` any image input to the embeddings the language
 * model takes in place of the image's tokens ([nTokens, nEmbdText] f32), with the image's content hash — the key the
 * prompt cache will use for image chunks (same pixels, same key; other pixels never match).
 */

import type { Ops } from '../backend/ops.js';
import { throwIfAborted } from '../errors.js';
import { parseGguf } from '../gguf/parse.js';
import type { ByteSource } from '../io/byte-source.js';
import { decodeImage, type ImageInput } from './decode-image.js';
import { encodeImageParts, type ImagePart, layoutImageParts } from './image-parts-layout.js';
import type { RgbImage } from './resize-pillow.js';
import { readVisionConfig, type VisionConfig } from './vision-config.js';
import { loadVisionWeights } from './vision-weights.js';
import { loadVitOps, vitOpsRuns } from './vit-ops.js';

/** An encoded image. */
export interface ImageEmbeddings {
  /** Tokens the image takes in the prompt. */
  readonly nTokens: number;
  /** [nTokens, nEmbdText]: the rows of all the image's chunks, in prompt order */
  readonly embeddings: Float32Array;
  /** What the image puts in the prompt, in order: text and its image chunks (one for fixed-size projectors). */
  readonly parts: readonly ImagePart[];
  /** sha256 (hex) of the decoded RGB8 pixels and their size: the prompt-cache key of the image chunk. */
  readonly hash: string;
}

/** A loaded mmproj. */
export interface VisionEncoder {
  readonly config: VisionConfig;
  /**
   * Decodes and encodes an image; the last few images' embeddings are kept by content hash, so the same pixels are
   * never encoded twice in a row of requests (a follow-up question about the same image).
   */
  encode(input: ImageInput, signal?: AbortSignal): Promise<ImageEmbeddings>;
  /** Images actually run through the encoder so far (cache hits excluded). */
  readonly encodedImages: number;
  /** The backend the encoder runs on ('cpu', 'wasm', 'webgpu'), or 'reference' for the plain-TS oracle. */
  readonly backend: string;
  /** Releases the encoder's backend (when it has one). */
  destroy(): void;
}

/** Encoded images kept by hash (each [nTokens, nEmbdText] f32: a 256-token Gemma 3 image at 2560 is 2.6 MB). */
const KEPT_IMAGES = 4;

/** sha256 of the pixels and their dimensions, hex. */
async function imageHash(img: RgbImage): Promise<string> {
  const head = new Uint32Array([img.width, img.height]);
  const bytes = new Uint8Array(8 + img.data.length);
  bytes.set(new Uint8Array(head.buffer), 0);
  bytes.set(img.data, 8);
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** The rows of several chunks, one after the other. */
function concatRows(chunks: readonly Float32Array[]): Float32Array {
  const out = new Float32Array(chunks.reduce((n, c) => n + c.length, 0));
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.length;
  }
  return out;
}

/**
 * Opens the mmproj in `source` for a text model of width `nEmbdText`. With `ops` the encoder runs on that backend
 * (`vit-ops.ts`; the encoder owns it and releases it in `destroy`) where `vitOpsRuns` says it can; otherwise (and
 * without `ops`) on the plain-TS reference.
 */
export async function loadVisionEncoder(
  source: ByteSource,
  nEmbdText: number,
  signal?: AbortSignal,
  ops?: Ops,
): Promise<VisionEncoder> {
  const gguf = await parseGguf(source, { signal });
  const read = readVisionConfig(gguf.metadata);
  const config = read.causalForTextWidths.includes(nEmbdText) ? { ...read, nonCausal: false } : read;
  const runs = vitOpsRuns(config, (name) => gguf.tensors.some((t) => t.name === name));
  if (ops && !runs) ops.destroy(); // this projector runs on the reference
  const onOps = ops && runs ? await loadVitOps(gguf, source, ops, config, nEmbdText, signal) : null;
  const weights = onOps ? null : await loadVisionWeights(gguf, source, config, nEmbdText, signal);
  /** The image's prompt parts, each picture encoded on the backend where it runs, else on the reference. */
  const encodeParts = (img: RgbImage, s?: AbortSignal): Promise<ImagePart[]> =>
    onOps
      ? layoutImageParts(config, img, nEmbdText, (pic) => onOps.encode(pic, s), s)
      : encodeImageParts(weights!, img, s);
  const kept = new Map<string, ImageEmbeddings>(); // by hash, least recently used first
  let encodedImages = 0;
  return {
    config,
    get encodedImages() {
      return encodedImages;
    },
    backend: onOps ? onOps.ops.name : 'reference',
    destroy() {
      onOps?.destroy();
    },
    async encode(input, encodeSignal) {
      const img = await decodeImage(input, encodeSignal);
      const hash = await imageHash(img);
      const hit = kept.get(hash);
      kept.delete(hash);
      if (hit) {
        kept.set(hash, hit); // most recently used
        return hit;
      }
      throwIfAborted(encodeSignal, 'encoding the image');
      const parts = await encodeParts(img, encodeSignal);
      encodedImages++;
      const chunks = parts.flatMap((p) => (p.type === 'rows' ? [p.embeddings] : []));
      const embeddings = chunks.length === 1 ? chunks[0] : concatRows(chunks);
      const out = { nTokens: embeddings.length / nEmbdText, embeddings, hash, parts };
      kept.set(hash, out);
      if (kept.size > KEPT_IMAGES) kept.delete(kept.keys().next().value!);
      return out;
    },
  };
}
