/**
 * A shared text model with some vocabulary entries renamed (their ids, types and weights kept): how the image-logits
 * fixtures get a small model of a vision model's architecture whose vocabulary holds the projector's marker tokens
 * (e.g. idefics3's `<fake_token_around_image>`, `<global-img>`, `<row_1_col_1>`), by renaming reserved control
 * tokens. The same file and edits always make the same bytes.
 */

import { parseGguf } from '../../src/gguf/parse.js';
import type { GgufValue } from '../../src/gguf/types.js';
import { writeGguf } from '../../src/gguf/write.js';
import { MemoryByteSource } from '../../src/io/byte-source.js';

/** `model` (a GGUF's bytes) with `tokenizer.ggml.tokens[id]` set to `text` for each `[id, text]` of `edits`. */
export async function retokenModel(
  model: Uint8Array,
  edits: readonly (readonly [number, string])[],
): Promise<Uint8Array> {
  const gguf = await parseGguf(new MemoryByteSource(model));
  const tokens = [...(gguf.metadata['tokenizer.ggml.tokens'] as string[])];
  for (const [id, text] of edits) tokens[id] = text;
  const metadata: Record<string, GgufValue> = { ...gguf.metadata, 'tokenizer.ggml.tokens': tokens };
  const base = gguf.tensorDataOffset;
  return writeGguf({
    version: gguf.version,
    metadata,
    metadataTypes: gguf.metadataTypes,
    tensors: gguf.tensors.map((t) => ({
      name: t.name,
      type: t.type,
      shape: t.shape,
      data: model.subarray(base + t.offset, base + t.offset + t.byteLength),
    })),
  });
}
