/**
 * Images in chat requests, as llama.cpp's server and mtmd place them: each `image_url` content part becomes the
 * media marker in the message text (so the template renders it where the image was), the rendered prompt is cut at
 * the markers, each piece tokenized alone, and each image goes in between as `imageBegin` text, the image's rows
 * (placeholder ids in the token list, `engine/prompt-images.ts`) and `imageEnd` text (`mtmd_tokenize`).
 */

import { LlmError } from '../errors.js';
import { imagePlaceholders, type PromptImage } from '../engine/prompt-images.js';
import type { Tokenizer } from '../tokenizer/tokenizer.js';
import type { ImageEmbeddings } from '../vision/vision-encoder.js';
import { type ImageSource, MEDIA_MARKER } from './image-request-parts.js';
import type { ChatMessage } from './types.js';

/** A request's encoded images, in order, how the projector frames them, and the function placing them in the prompt. */
export interface RequestImages {
  readonly encoded: readonly ImageEmbeddings[];
  readonly framing: ImageFraming;
  readonly place: typeof imagePrompt;
}

/** How the model's projector frames an image in the prompt (`VisionConfig`). */
export interface ImageFraming {
  readonly imageBegin: string;
  readonly imageEnd: string;
  readonly nonCausal: boolean;
}

/**
 * The prompt's token ids and image chunks from its rendered text (`tokens`: how the chat layer tokenized it whole,
 * BOS included when it added one) and the encoded images, in marker order; `dropped`: the history was trimmed (the
 * first images then may have no marker left).
 */
export function imagePrompt(
  tk: Tokenizer,
  text: string,
  tokens: readonly number[],
  images: readonly ImageEmbeddings[],
  framing: ImageFraming,
  dropped = false,
): { tokens: number[]; images: PromptImage[] } {
  const pieces = text.split(MEDIA_MARKER);
  // History trimming drops the oldest turns: their images go with them.
  if (dropped && pieces.length - 1 < images.length) images = images.slice(images.length - (pieces.length - 1));
  if (pieces.length - 1 !== images.length) {
    throw new LlmError(
      'invalid-request',
      `placing images: the rendered prompt holds ${pieces.length - 1} image markers for ${images.length} images ` +
        `(the chat template dropped or repeated an image part, or a text part contains ${MEDIA_MARKER})`,
      { details: { markers: pieces.length - 1, images: images.length } },
    );
  }
  const encode = (s: string) => (s === '' ? [] : tk.encode(s, { parseSpecial: true, addSpecial: false }));
  const ids = encode(pieces[0]);
  if (tk.bosId !== null && tokens[0] === tk.bosId && ids[0] !== tk.bosId) ids.unshift(tk.bosId);
  const chunks: PromptImage[] = [];
  images.forEach((im, i) => {
    // The image's parts: its begin/end text (tiled projectors: tile markers, row ends) and its image chunks.
    const placeholders = imagePlaceholders(im.hash, im.nTokens);
    let row = 0;
    for (const part of im.parts) {
      if (part.type === 'text') ids.push(...encode(part.text));
      else if (part.type === 'token') ids.push(tokenWithText(tk, part.text));
      else {
        chunks.push({
          start: ids.length,
          nTokens: part.nTokens,
          embeddings: part.embeddings,
          nonCausal: framing.nonCausal,
          ...(part.grid ? { grid: part.grid } : {}),
        });
        ids.push(...placeholders.slice(row, row + part.nTokens));
        row += part.nTokens;
      }
    }
    ids.push(...encode(pieces[i + 1])); // each tokenized alone, as mtmd does
  });
  return { tokens: ids, images: chunks };
}

/** Marker tokens already looked up, per vocabulary (a scan of the vocabulary each). */
const lookedUp = new WeakMap<Tokenizer, Map<string, number>>();

/** The first token whose rendered text is exactly `text` (mtmd `lookup_token`), or `invalid-request`. */
function tokenWithText(tk: Tokenizer, text: string): number {
  let known = lookedUp.get(tk);
  if (!known) lookedUp.set(tk, (known = new Map()));
  const hit = known.get(text);
  if (hit !== undefined) return hit;
  for (let id = 0; id < tk.vocabSize; id++) {
    if (tk.decode([id], { renderSpecial: true }) === text) {
      known.set(text, id);
      return id;
    }
  }
  throw new LlmError(
    'invalid-request',
    `placing images: the vocabulary has no token ${JSON.stringify(text)}, which this vision projector puts around image tiles; the mmproj belongs to another model`,
    { details: { token: text } },
  );
}

/** What a request's images need of the engine: its vision encoder, when it was created with one. */
export interface ImageEncoderHost {
  readonly config: ImageFraming;
  encode(input: ImageSource, signal?: AbortSignal): Promise<ImageEmbeddings>;
}

/**
 * A request's images (`takeImageParts`) encoded (the encoder keeps recent ones by content hash), with how to place
 * them in its prompt; `invalid-request` when there is no vision encoder. This module loads only for requests holding
 * images (a chunk of its own: text-only pages never fetch it).
 */
export async function encodeRequestImages(
  vision: ImageEncoderHost | undefined,
  taken: { readonly messages: ChatMessage[]; readonly images: readonly ImageSource[] },
  signal: AbortSignal | undefined,
): Promise<RequestImages> {
  if (!vision) {
    throw new LlmError(
      'invalid-request',
      `chat.completions.create: the request holds ${taken.images.length} image(s) but this model takes text only; ` +
        "create the engine with the model's vision projector: createEngine({ model, mmproj })",
      { details: { field: 'messages', images: taken.images.length } },
    );
  }
  const encoded: ImageEmbeddings[] = [];
  for (const src of taken.images) encoded.push(await vision.encode(src, signal));
  return { encoded, framing: vision.config, place: imagePrompt };
}
