/**
 * Images in chat requests, as llama.cpp's server and mtmd place them: each `image_url` content part becomes the
 * media marker in the message text (so the template renders it where the image was), the rendered prompt is cut at
 * the markers, each piece tokenized alone, and each image goes in between as `imageBegin` text, the image's rows
 * (placeholder ids in the token list, `engine/prompt-images.ts`) and `imageEnd` text (`mtmd_tokenize`).
 */

import { LlmError } from '../errors.js';
import { invalidField } from '../engine/sampling-options.js';
import { imagePlaceholders, type PromptImage } from '../engine/prompt-images.js';
import type { Tokenizer } from '../tokenizer/tokenizer.js';
import type { ImageEmbeddings } from '../vision/vision-encoder.js';
import type { ChatMessage, ChatRequestMessage } from './types.js';

/** llama.cpp's default media marker (`mtmd_default_marker`). */
export const MEDIA_MARKER = '<__media__>';

/** What an image part carries: a data:/http(s) URL or a Blob. */
type ImageSource = string | Blob;

/** Request messages with each image part replaced by the media marker, and the images in prompt order. */
function takeImageParts(messages: readonly ChatRequestMessage[]): {
  messages: ChatMessage[];
  images: ImageSource[];
} {
  const images: ImageSource[] = [];
  if (!Array.isArray(messages)) return { messages: messages as unknown as ChatMessage[], images }; // checked later
  const out = messages.map((m: ChatRequestMessage, i) => {
    if (m === null || typeof m !== 'object' || !Array.isArray(m.content)) return m as ChatMessage;
    const content = (m.content as readonly unknown[]).map((part, k) => {
      const p = part as { type?: unknown; image_url?: { url?: unknown } } | null;
      if (p === null || typeof p !== 'object' || p.type !== 'image_url') return part;
      const url = p.image_url !== null && typeof p.image_url === 'object' ? p.image_url.url : undefined;
      const isBlob = typeof Blob !== 'undefined' && url instanceof Blob;
      if (!(isBlob || (typeof url === 'string' && /^(data:|https?:\/\/)/i.test(url))))
        invalidField(
          `messages[${i}].content[${k}]`,
          part,
          "{ type: 'image_url', image_url: { url: a data: or http(s) URL, or a Blob } }",
        );
      images.push(url as ImageSource);
      return { type: 'text', text: MEDIA_MARKER };
    });
    return { ...m, content } as ChatMessage;
  });
  return { messages: out, images };
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
interface ImageEncoderHost {
  readonly config: ImageFraming;
  encode(input: ImageSource, signal?: AbortSignal): Promise<ImageEmbeddings>;
}

/**
 * The request's messages with image parts turned into markers, and its images encoded (the encoder keeps recent
 * ones by content hash); `invalid-request` when there are images and no vision encoder.
 */
export async function encodeRequestImages(
  vision: ImageEncoderHost | undefined,
  messages: readonly ChatRequestMessage[],
  signal: AbortSignal | undefined,
): Promise<{ messages: ChatMessage[]; images?: { encoded: ImageEmbeddings[]; framing: ImageFraming } }> {
  const taken = takeImageParts(messages);
  if (taken.images.length === 0) return { messages: taken.messages };
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
  return { messages: taken.messages, images: { encoded, framing: vision.config } };
}
