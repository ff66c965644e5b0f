/**
 * Image chunks of a prompt (llama.cpp mtmd's `MTMD_INPUT_CHUNK_TYPE_IMAGE`): the chat layer places an image's
 * embedding rows at some prompt positions; the prompt's token list holds placeholder ids there. Placeholders are
 * negative (never a vocabulary id) and spelled from the image's content hash, so the prompt cache, a trie over ids,
 * matches an image chunk only for the same pixels: a follow-up question about the same image reuses its KV, another
 * image never matches (its first placeholder already differs). A match that ends inside an image chunk resumes at
 * the chunk's start: a non-causal chunk is evaluated whole.
 */

import type { Context } from './context.js';

/** One image chunk of a prompt. */
export interface PromptImage {
  /** First prompt position of the chunk. */
  readonly start: number;
  /** Positions the chunk takes. */
  readonly nTokens: number;
  /** [nTokens, nEmbd] f32: the rows evaluated in place of tokens. */
  readonly embeddings: Float32Array;
  /** The chunk's rows attend to each other whole (gemma3). */
  readonly nonCausal: boolean;
  /** The chunk's token grid (M-RoPE models place it at grid positions: `EmbeddingsEvalOptions.grid`). */
  readonly grid?: import('../model/rope-streams.js').ImageGrid;
}

/** Placeholder ids of an image's positions, [n]: negative, spelled from its sha256 (hex). */
export function imagePlaceholders(hash: string, n: number): number[] {
  const base = Number.parseInt(hash.slice(0, 8), 16) % 0x40000000; // 30 bits of the hash
  return Array.from({ length: n }, (_, i) => -1 - ((base + i) % 0x40000000));
}

/** Where prefill resumes after a cache match of `reused` positions: there, or at the start of the chunk it cuts. */
export function resumeAt(reused: number, images: readonly PromptImage[]): number {
  for (const im of images) if (reused > im.start && reused < im.start + im.nTokens) return im.start;
  return reused;
}

/**
 * Evaluates prompt positions from … to−1 of `slot`: text through `ctx.decode`, each image chunk (whole, never cut)
 * through `evalEmbeddings`; `logits` applies to the last position.
 */
export async function prefillWithImages(
  ctx: Context,
  slot: number,
  prompt: readonly number[],
  images: readonly PromptImage[],
  range: { readonly from: number; readonly to: number },
  logits: 'last' | 'none',
  signal?: AbortSignal,
): Promise<void> {
  let pos = range.from;
  for (const im of images) {
    const end = im.start + im.nTokens;
    if (end <= pos || im.start >= range.to) continue;
    if (im.start > pos)
      await ctx.decode(
        [{ slot, startPos: pos, tokens: prompt.slice(pos, im.start), logits: 'none' }],
        'prefill',
        signal,
      );
    const last = end >= range.to;
    ctx.cache.beginWrite(slot);
    await ctx.transformer.evalEmbeddings!(im.embeddings, im.start, slot, {
      logits: last ? logits : 'none',
      nonCausal: im.nonCausal,
      ...(im.grid ? { grid: im.grid } : {}),
      ...(signal ? { signal } : {}),
    });
    pos = end;
  }
  if (pos < range.to)
    await ctx.decode([{ slot, startPos: pos, tokens: prompt.slice(pos, range.to), logits }], 'prefill', signal);
}
