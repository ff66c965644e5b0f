/**
 * `loadAnyModel`: what the engine and the embedding paths load — an encoder (`Architecture.encoder`: the bert family,
 * embeddings only, `encoder.ts`) or a decoder (`loadTransformer`), with an embedding model's pooled-vector head
 * (EmbeddingGemma's dense layers, `dense-head.ts`) when its file has one. The encoder code is imported on demand.
 */

import type { Ops } from '../backend/ops.js';
import type { GgufFile } from '../gguf/types.js';
import type { ByteSource } from '../io/byte-source.js';
import { loadChunk } from '../io/load-chunk.js';
import { getArchitecture, loadArchitecture } from './arch/index.js';
import { denseHeadOf } from './dense-head.js';
import { hasIqTensors } from './feature-kernels.js';
import type { EncoderModel } from './encoder.js';
import { checkLoadShape, type LoadTransformerOptions, loadTransformer, readModelConfig } from './load.js';
import type { PooledProjection } from './pooling.js';
import { DEFAULT_UBATCH_SIZE, defaultContextLength } from './run-shape.js';
import { WeightLoader } from './weight-loader.js';
import type { TransformerModel } from './transformer.js';

/** A model `loadAnyModel` returns: a decoder (`transformer.ts`) or an encoder (`encoder.ts`). */
export type LoadedModel = (TransformerModel | EncoderModel) & { readonly pooledProjection?: PooledProjection | null };

/** Loads `gguf` onto `ops` as an encoder or a decoder (see the file header). */
export async function loadAnyModel(
  gguf: GgufFile,
  source: ByteSource,
  ops: Ops,
  options: LoadTransformerOptions = {},
): Promise<LoadedModel> {
  await loadArchitecture(gguf.metadata['general.architecture']); // encoder entries are a chunk of their own
  const config = readModelConfig(gguf);
  const encoder = getArchitecture(config.arch).encoder;
  const contextLength = options.contextLength ?? defaultContextLength(config);
  const ubatchSize = options.ubatchSize ?? DEFAULT_UBATCH_SIZE;
  const nSlots = options.nSlots ?? 1;
  checkLoadShape(contextLength, ubatchSize, nSlots);
  if (!encoder) {
    const head = await denseHeadOf(new WeightLoader(gguf, source, ops, options), config);
    const model = await loadTransformer(gguf, source, ops, options);
    return head ? Object.assign(model, { pooledProjection: head }) : model;
  }
  // The encoder's loader and forward pass are a chunk of their own: a page that only chats never fetches them.
  const [{ EncoderModel }, { encoderRankHeadOf, loadEncoderWeights }] = await loadChunk('encoder model', () =>
    Promise.all([import('./encoder.js'), import('./encoder-weights.js')]),
  );
  // nomic-bert-moe's experts and IQ weights use the backend's feature kernels (feature-kernels.ts).
  if (config.moe || hasIqTensors(gguf)) await ops.loadFeatureKernels?.();
  const loader = new WeightLoader(gguf, source, ops, options);
  const rankHead = config.poolingType === 'rank' ? await encoderRankHeadOf(loader, config) : null;
  const weights = await loadEncoderWeights(loader, config, encoder, rankHead);
  const shape = { contextLength, ubatchSize, nSlots, kvType: options.kvType };
  return new EncoderModel(config, weights, ops, shape, encoder);
}
