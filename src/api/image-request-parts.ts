/**
 * The image parts of chat request messages (OpenAI `image_url` content parts): each becomes llama.cpp's media marker
 * in the message text, the images collected in prompt order. Kept apart from `image-parts.ts` (encoding and placing
 * them), which loads only for requests that hold images.
 */

import { invalidField } from '../engine/sampling-options.js';
import type { ImageEncoderHost, RequestImages } from './image-parts.js';
import type { ChatMessage, ChatRequestMessage } from './types.js';

/** llama.cpp's default media marker (`mtmd_default_marker`). */
export const MEDIA_MARKER = '<__media__>';

/** What an image part carries: a data:/http(s) URL or a Blob. */
export type ImageSource = string | Blob;

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

/**
 * The request's messages with image parts turned into markers, and its images encoded (`image-parts.ts`, imported
 * only when there are images); `invalid-request` when there are images and no vision encoder.
 */
export async function requestImages(
  vision: ImageEncoderHost | undefined,
  messages: readonly ChatRequestMessage[],
  signal: AbortSignal | undefined,
): Promise<{ messages: ChatMessage[]; images?: RequestImages }> {
  const taken = takeImageParts(messages);
  if (taken.images.length === 0) return { messages: taken.messages };
  const images = await (await import('./image-parts.js')).encodeRequestImages(vision, taken, signal);
  return { messages: taken.messages, images };
}
