/**
 * The IQ1–IQ3 codebook grids, loaded on demand: about 26 KB gzipped of tables (TypeScript and WGSL) that only models
 * holding IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS or IQ3_S tensors need, kept out of the script-tag and worker
 * downloads (a separate chunk). `loadTransformer` awaits `loadIqGrids()` before uploading such a model; the
 * dequantizers and the WebGPU decoders read them through `iqGrids()`.
 */

import { LlmError } from '../errors.js';
import { loadChunk } from '../io/load-chunk.js';
import { GgmlType } from '../gguf/types.js';
import type { QuantType } from './quant-type.js';

/** The types whose dequantizers read the grids. */
export const IQ_GRID_TYPES: ReadonlySet<GgmlType> = new Set([
  GgmlType.IQ1_S,
  GgmlType.IQ1_M,
  GgmlType.IQ2_XXS,
  GgmlType.IQ2_XS,
  GgmlType.IQ2_S,
  GgmlType.IQ3_XXS,
  GgmlType.IQ3_S,
]);

/** The grids (ggml's `iq*_grid` as bytes, element j of entry e at 8e + j or 4e + j) and the WGSL tables by name. */
export interface IqGrids {
  readonly iq1s: Uint8Array;
  readonly iq2xxs: Uint8Array;
  readonly iq2xs: Uint8Array;
  readonly iq2s: Uint8Array;
  readonly iq3xxs: Uint8Array;
  readonly iq3s: Uint8Array;
  /** shaders/quant/tables/<name>.wgsl sources. */
  readonly wgsl: Readonly<Record<string, string>>;
  /** The types' dequantizers (<type>-rows.ts), by the QuantType file's name: they come with the grids they read. */
  readonly rows: Readonly<Record<IqRowsName, IqRows>>;
}

/** The IQ types whose dequantizer is in the grid chunk. */
type IqRowsName = 'iq1_s' | 'iq1_m' | 'iq2_xxs' | 'iq2_xs' | 'iq2_s' | 'iq3_xxs' | 'iq3_s';

/** One type's row dequantizer: `qt` is its QuantType entry (for the argument checks). */
type IqRows = (qt: QuantType, src: Uint8Array, dst: Float32Array, nElements: number) => void;

let grids: IqGrids | null = null;

/** Loads the grids (once; later calls return at once). */
export async function loadIqGrids(): Promise<IqGrids> {
  grids ??= (await loadChunk('IQ1–IQ3 quant grids', () => import('./grids/iq-grid-tables.js'))).IQ_GRIDS;
  return grids;
}

/** The loaded grids; `LlmError('invalid-request')` when `loadIqGrids` has not run yet. */
export function iqGrids(): IqGrids {
  if (grids === null) {
    throw new LlmError(
      'invalid-request',
      'IQ quant grids are not loaded: await loadIqGrids() before dequantizing IQ1–IQ3 data (loadTransformer does)',
    );
  }
  return grids;
}
