/**
 * Architectures whose llama.cpp loader sizes `attn_output` as [n_embd, n_embd] (qwen2 and phi3 also `attn_q`): their heads must
 * tile n_embd exactly (head_count × head size = n_embd on every layer), and llama.cpp refuses any other file with
 * "wrong shape"; so does this, naming the keys instead of loading a model llama.cpp cannot run.
 */

import { LlmError } from '../errors.js';
import type { ModelConfig } from './config.js';

/** Returns `c` when every layer's heads × head size is n_embd; otherwise throws `gguf-invalid` naming the keys. */
export function requireSquareAttention(c: ModelConfig): ModelConfig {
  const heads = c.layerHeads.find((h) => h * c.headDim !== c.embeddingLength);
  if (heads === undefined) return c;
  throw new LlmError(
    'gguf-invalid',
    `reading model config: ${c.arch} needs head_count × head size = n_embd (llama.cpp sizes attn_output [n_embd, n_embd]), but '${c.arch}.attention.head_count' ${heads} × '${c.arch}.attention.key_length' ${c.headDim} = ${heads * c.headDim} ≠ '${c.arch}.embedding_length' ${c.embeddingLength}; the model file is broken`,
    { details: { key: `${c.arch}.attention.key_length`, value: c.headDim } },
  );
}
