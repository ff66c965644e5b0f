/**
 * The header checks of an encoder model (the bert family), kept apart from its loader (`encoder-weights.ts`, a chunk
 * fetched only when an encoder loads) because `readModelConfig` runs them for every file it reads.
 */

import { LlmError } from '../errors.js';
import type { GgufFile } from '../gguf/types.js';
import type { ModelConfig } from './config.js';

/**
 * Header checks of an encoder file before any upload (the decoder's `checkConfigAgainstTensors` expects an output
 * norm and gated FFN): `token_embd.weight` 2-D of n_embd columns and `block_count` within the layers present.
 */
export function checkEncoderTensors(gguf: GgufFile, c: ModelConfig): void {
  const embd = gguf.tensors.find((t) => t.name === 'token_embd.weight');
  if (embd?.shape.length !== 2 || embd.shape[0] !== c.embeddingLength) {
    throw new LlmError(
      'gguf-invalid',
      `loading model: token_embd.weight should be [${c.embeddingLength}, vocab] ('${c.arch}.embedding_length'), ` +
        `found ${embd ? `[${embd.shape.join(', ')}]` : 'none'}; the model file is corrupt or hostile`,
      { details: { key: `${c.arch}.embedding_length`, value: c.embeddingLength } },
    );
  }
  const present = new Set(gguf.tensors.map((t) => /^blk\.(\d{1,9})\./.exec(t.name)?.[1]).filter((m) => m));
  if (c.nLayers > present.size) {
    throw new LlmError(
      'gguf-invalid',
      `loading model: '${c.arch}.block_count' is ${c.nLayers} but the file holds tensors for ${present.size} layer(s); ` +
        'the model file is corrupt or hostile',
      { details: { key: `${c.arch}.block_count`, value: c.nLayers, layersPresent: present.size } },
    );
  }
}
