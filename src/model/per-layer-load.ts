/**
 * Loading gemma4's per-layer token embeddings split by layer: layer l's columns of `per_layer_token_embd` (whole
 * quant blocks of each row, gathered from reads of at most 64 MiB of whole rows: a real table is 2–2.5 GB, never one
 * buffer of it), its rows of `per_layer_model_proj`, and `per_layer_proj_norm`.
 */

import type { Weight } from '../backend/ops.js';
import { LlmError } from '../errors.js';
import { GGML_TYPES } from '../gguf/types.js';
import type { TensorNames } from './arch/index.js';
import type { ModelConfig } from './config.js';
import type { PerLayerWeights } from './per-layer-input.js';
import type { WeightLoader, WeightSlot } from './weight-loader.js';

/** Bytes of `per_layer_token_embd` read at once while splitting it per layer. */
const READ_BYTES = 64 * 1024 * 1024;

/** The per-layer weights' slots (projection, norm) named now; `tables` reads and uploads the token table itself. */
export function namePerLayerWeights(
  loader: WeightLoader,
  names: TensorNames,
  c: ModelConfig,
): { modelProj: WeightSlot[]; projNorm: WeightSlot; tables: () => Promise<Weight[]> } {
  const nPL = c.perLayerEmbd;
  const parts = Array.from({ length: c.nLayers }, (_, il) => [`${names.perLayerModelProj}[${il}]`, nPL] as const);
  return {
    modelProj: loader.uploadSplit(names.perLayerModelProj, c.embeddingLength, parts),
    projNorm: loader.upload(names.perLayerProjNorm, [nPL]),
    tables: () => perLayerTables(loader, names.perLayerTokenEmbd, c),
  };
}

/** The weights once every slot is filled. */
export function perLayerWeightsOf(
  slots: { modelProj: WeightSlot[]; projNorm: WeightSlot },
  tables: Weight[],
): PerLayerWeights {
  return { tokenEmbd: tables, modelProj: slots.modelProj.map((s) => s.get()), projNorm: slots.projNorm.get() };
}

/** Layer l's [vocab rows, nPL] table of each layer, uploaded as its own weight. */
async function perLayerTables(loader: WeightLoader, name: string, c: ModelConfig): Promise<Weight[]> {
  const nPL = c.perLayerEmbd;
  const total = nPL * c.nLayers;
  const shape = [total, c.vocabSize];
  const info = loader.info(name);
  const { blockElements, blockBytes } = GGML_TYPES.get(info.type)!; // a known type: checked at parse
  if (nPL % blockElements !== 0) {
    throw new LlmError(
      'unsupported-type',
      `loading model: tensor '${name}' cannot be split per layer: ${nPL} columns are not whole blocks of ${blockElements}`,
      { details: { tensor: name, perLayer: nPL, blockElements } },
    );
  }
  const rowBytes = (total / blockElements) * blockBytes;
  const partBytes = (nPL / blockElements) * blockBytes;
  const parts = Array.from({ length: c.nLayers }, () => new Uint8Array(partBytes * c.vocabSize)); // [vocab, nPL]
  const chunkRows = Math.max(1, Math.floor(READ_BYTES / rowBytes));
  for (let row0 = 0; row0 < c.vocabSize; row0 += chunkRows) {
    const rows = Math.min(chunkRows, c.vocabSize - row0);
    const last = row0 + rows >= c.vocabSize;
    const bytes = await loader.readRange(name, shape, row0 * rowBytes, rows * rowBytes, last);
    for (let r = 0; r < rows; r++) {
      for (let il = 0; il < c.nLayers; il++) {
        const from = r * rowBytes + il * partBytes;
        parts[il].set(bytes.subarray(from, from + partBytes), (row0 + r) * partBytes);
      }
    }
  }
  const out: Weight[] = [];
  for (const [il, part] of parts.entries()) {
    out.push(await loader.uploadBuilt({ name: `${name}[${il}]`, type: info.type, shape: [nPL, c.vocabSize] }, part));
  }
  return out;
}
