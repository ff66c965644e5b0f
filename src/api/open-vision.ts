/** `EngineOptions.mmproj`: the vision projector opened next to its language model. */

import type { Ops } from '../backend/ops.js';
import { LlmError } from '../errors.js';
import { openModelSource } from '../io/index.js';
import type { ModelInput } from '../io/index.js';
import type { Transformer } from '../model/model.js';
import { loadVisionEncoder, type VisionEncoder } from '../vision/vision-encoder.js';

/**
 * Loads the mmproj in `input` for `model` (its weights are read onto the encoder's backend, the source closed):
 * `invalid-request` when its output width is not the model's n_embd or the model cannot take embedding rows,
 * `gguf-invalid` / `unsupported-arch` for a file that is not a supported projector. `makeOps` starts the encoder's own
 * backend (the model's kind; the encoder owns it); without it the encoder runs on the plain-TS reference.
 */
export async function openVision(
  input: ModelInput,
  model: Transformer,
  signal?: AbortSignal,
  makeOps?: () => Promise<Ops>,
): Promise<VisionEncoder> {
  if (!model.evalEmbeddings) {
    throw new LlmError(
      'invalid-request',
      `createEngine: option 'mmproj': ${model.config.arch} takes no embedding input`,
      {
        details: { field: 'mmproj' },
      },
    );
  }
  const source = await openModelSource(input, { signal });
  try {
    return await loadVisionEncoder(source, model.config.embeddingLength, signal, await makeOps?.());
  } finally {
    await source.close?.();
  }
}
