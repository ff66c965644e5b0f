/**
 * `--mmproj <file> --image <file>` of `generate` and `eval`: the image encoded by the model's vision projector and
 * placed in the `--prompt` text where `<__media__>` stands, or before the text when it has none (as llama.cpp's
 * `llama-mtmd-cli` does); no chat template is applied (the prompt is raw, as the commands' text prompts are).
 */

import { readFile } from 'node:fs/promises';
import { imagePrompt } from '../api/image-parts.js';
import { MEDIA_MARKER } from '../api/image-request-parts.js';
import type { PromptImage } from '../engine/prompt-images.js';
import { LlmError } from '../errors.js';
import type { GgufFile } from '../gguf/types.js';
import { openModelSource } from '../io/index.js';
import { readModelConfig } from '../model/load.js';
import type { Transformer } from '../model/model.js';
import type { Tokenizer } from '../tokenizer/tokenizer.js';
import { loadVisionEncoder } from '../vision/vision-encoder.js';

/** The flags, for `parseCommandLine`. */
export const IMAGE_FLAGS = { mmproj: { type: 'string' }, image: { type: 'string' } } as const;

/** Usage text of the flags. */
export const IMAGE_FLAGS_HELP = '[--mmproj <mmproj.gguf> --image <png|jpeg> (the image at <__media__> in --prompt)]';

/** The prompt's tokens with the image placed, and its image chunk; null without the flags. */
export async function imageInput(
  command: string,
  gguf: GgufFile,
  tokenizer: Tokenizer | null,
  values: { prompt?: string; mmproj?: string; image?: string },
  signal: AbortSignal,
): Promise<{ tokens: number[]; images: PromptImage[] } | null> {
  if (values.mmproj === undefined && values.image === undefined) return null;
  if (values.mmproj === undefined || values.image === undefined || values.prompt === undefined || !tokenizer) {
    throw new LlmError(
      'invalid-request',
      `${command}: an image needs --mmproj <file>, --image <file> and --prompt "…" (a model with a vocabulary)`,
    );
  }
  const source = await openModelSource(values.mmproj, { signal });
  const vision = await (async () => {
    try {
      return await loadVisionEncoder(source, readModelConfig(gguf).embeddingLength, signal);
    } finally {
      await source.close?.();
    }
  })();
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await readFile(values.image));
  } catch (cause) {
    throw new LlmError('invalid-request', `${command}: cannot read the image ${values.image}`, { cause });
  }
  const encoded = await vision.encode(bytes, signal);
  const text = values.prompt.includes(MEDIA_MARKER) ? values.prompt : MEDIA_MARKER + values.prompt;
  const bos = tokenizer.addBos && tokenizer.bosId !== null ? [tokenizer.bosId] : [];
  return imagePrompt(tokenizer, text, bos, [encoded], vision.config);
}

/**
 * Logits of every position of `tokens` ([n, vocab]) evaluated from position 0 of slot 0: text through `eval`, each
 * image chunk as one `evalEmbeddings` step. An image's own positions predict nothing (llama.cpp outputs no logits
 * there): their rows are NaN.
 */
export async function evalWithImages(
  model: Transformer,
  tokens: readonly number[],
  images: readonly PromptImage[],
  signal: AbortSignal,
): Promise<Float32Array> {
  const vocab = model.config.vocabSize;
  const out = new Float32Array(tokens.length * vocab); // [n, vocab]
  let pos = 0;
  const text = async (end: number) => {
    if (end <= pos) return;
    out.set(
      (await model.eval(Int32Array.from(tokens.slice(pos, end)), pos, 0, { logits: 'all', signal }))!,
      pos * vocab,
    );
    pos = end;
  };
  for (const im of images) {
    await text(im.start);
    const grid = im.grid ? { grid: im.grid } : {}; // M-RoPE models place the chunk at grid positions
    await model.evalEmbeddings!(im.embeddings, im.start, 0, {
      logits: 'none',
      nonCausal: im.nonCausal,
      signal,
      ...grid,
    });
    out.fill(Number.NaN, im.start * vocab, (im.start + im.nTokens) * vocab);
    pos = im.start + im.nTokens;
  }
  await text(tokens.length);
  return out;
}
