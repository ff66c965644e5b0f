/**
 * The run shape of a loaded model (KV cells per sequence, tokens per step, sequences) with its defaults, and the
 * activation buffers a `TransformerModel` allocates for it — one list, used both to allocate them and to size them
 * for the memory plan before anything is downloaded.
 */

import type { KvType } from '../backend/kv-type.js';
import type { ModelConfig } from './config.js';
import { describeLayers } from './layer-spec.js';
import { mamba2Activations } from './mamba2-layer.js';
import { perLayerActivations } from './per-layer-input.js';
import { altUpActivations } from './altup-load.js';

/** KV cells per sequence when the caller gives none (capped by the training context when the file states one). */
export const DEFAULT_CONTEXT_LENGTH = 4096;
/** Most tokens per step when the caller gives none. */
export const DEFAULT_UBATCH_SIZE = 512;
/** At most this many logit values per step buffer (64 MiB of f32); bigger vocabularies take fewer rows per step. */
const MAX_LOGIT_VALUES = 1 << 24;

/** The geometry a model is loaded with. */
export interface RunShape {
  /** KV cells per sequence (positions one sequence can hold). */
  readonly contextLength: number;
  /** Most tokens per step (≤ contextLength). */
  readonly ubatchSize: number;
  /** Independent sequences. */
  readonly nSlots: number;
  /** KV cache element type; default: the backend's own. */
  readonly kvType?: KvType;
}

/** The default KV size: the training context, at most `DEFAULT_CONTEXT_LENGTH` (which is also used when it is unknown). */
export function defaultContextLength(config: ModelConfig): number {
  return Math.min(config.trainContextLength || DEFAULT_CONTEXT_LENGTH, DEFAULT_CONTEXT_LENGTH);
}

/** Rows of the logits buffer for a step of `ubatchSize` tokens. */
export function logitRowsOf(vocabSize: number, ubatchSize: number): number {
  return Math.max(1, Math.min(ubatchSize, Math.floor(MAX_LOGIT_VALUES / Math.max(1, vocabSize))));
}

/** One activation buffer `[rows, cols]` f32; `key` is unique within a model (width-dependent buffers carry the width). */
export interface ActivationShape {
  readonly key: string;
  readonly label: string;
  readonly rows: number;
  readonly cols: number;
}

/** Key of a width-dependent buffer (one buffer per distinct width, shared by the layers that have it). */
export function widthKey(label: string, cols: number): string {
  return `${label}:${cols}`;
}

/**
 * Every activation buffer of a model of `config` run with `ubatchSize` tokens per step: the residual stream and its
 * sub-block buffers, the last row and the logits, then q/att, k/v and gate/up/hidden once per distinct width.
 */
export function activationShapes(config: ModelConfig, ubatchSize: number): ActivationShape[] {
  const c = config;
  const ub = ubatchSize;
  const shapes: ActivationShape[] = [
    { key: 'x', label: 'x', rows: ub, cols: c.embeddingLength },
    { key: 'xb', label: 'xb', rows: ub, cols: c.embeddingLength },
    { key: 'xb2', label: 'xb2', rows: ub, cols: c.embeddingLength },
    { key: 'x_last', label: 'x_last', rows: 1, cols: c.embeddingLength },
    { key: 'logits', label: 'logits', rows: logitRowsOf(c.vocabSize, ub), cols: c.vocabSize },
  ];
  const seen = new Set<string>();
  const add = (label: string, cols: number, rows = ub): void => {
    const key = widthKey(label, cols);
    if (seen.has(key) || cols === 0) return;
    seen.add(key);
    shapes.push({ key, label, rows, cols });
  };
  const layers = describeLayers(c);
  // Expert rows are token·nUsed + slot: sized for the most experts any layer uses.
  const slotRows = ub * Math.max(1, ...layers.map((l) => l.moe?.nUsed ?? 0));
  for (const layer of layers) {
    if (layer.kind === 'shortconv') {
      add('bcx', 3 * c.embeddingLength); // B | C | x of the in_proj
    } else if (layer.kind === 'deltanet') {
      const d = layer.dims;
      for (const label of ['dn_mixed', 'dn_conv']) add(label, 2 * d.nKHeads * d.headK + d.nVHeads * d.headV); // q | k | v
      for (const label of ['dn_z', 'dn_out']) add(label, d.nVHeads * d.headV);
      for (const label of ['dn_beta', 'dn_alpha']) add(label, d.nVHeads);
    } else if (layer.kind === 'mamba2') {
      for (const [label, cols] of mamba2Activations(layer.dims)) add(label, cols);
    } else if (layer.kind === 'attention') {
      for (const label of ['q', 'att']) add(label, layer.nHeads * layer.headDim);
      if (c.attnOutputGate) {
        add('qg', 2 * layer.nHeads * layer.headDim); // per-head [q | gate] rows of the gated q projection
        add('q_gate', layer.nHeads * layer.headDim);
      }
      for (const label of ['k', 'v']) add(label, layer.nKvHeads * layer.headDim);
      if (layer.ssm) for (const [label, cols] of mamba2Activations(layer.ssm)) add(label, cols);
    }
    for (const label of ['gate', 'up', 'hidden']) add(label, layer.ffnDim);
    const m = layer.moe;
    if (m) {
      add('moe_logits', m.nExperts);
      for (const label of ['moe_ids', 'moe_weights']) add(label, m.nUsed);
      for (const label of ['moe_gate', 'moe_up', 'moe_hidden']) add(label, m.expertDim, slotRows);
      add('moe_down', c.embeddingLength, slotRows);
      if (m.fusedGateUp) add('moe_gate_up', 2 * m.expertDim, slotRows);
      if (m.shared === 'gated') add('moe_shared_logit', 1);
    }
  }
  if (c.perLayerEmbd > 0) {
    for (const { key, cols } of perLayerActivations(c.nLayers, c.perLayerEmbd)) {
      shapes.push({ key, label: key.split(':')[0], rows: ub, cols });
    }
  }
  for (const { key, cols } of altUpActivations(c)) shapes.push({ key, label: key.split(':')[0], rows: ub, cols });
  return shapes;
}

/** Bytes of the activation buffers (f32) of a model of `config` loaded with `shape`. */
export function activationBytes(config: ModelConfig, shape: Pick<RunShape, 'contextLength' | 'ubatchSize'>): number {
  const ub = Math.max(1, Math.min(shape.ubatchSize, shape.contextLength));
  return activationShapes(config, ub).reduce((sum, a) => sum + a.rows * a.cols * 4, 0);
}
