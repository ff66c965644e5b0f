/**
 * Model parts that come in chunks of their own, loaded by `loadTransformer` only for the models that use them (a page
 * chatting with a dense transformer never fetches them): M-RoPE position bookkeeping and gemma3n's AltUp.
 */

import type { AltUp } from './altup.js';
import type { ModelConfig } from './config.js';
import type { RopeStreams } from './rope-streams.js';

export type { AltUp, RopeStreams };

/** See the file header. */
export interface LazyModelParts {
  /** Where the tokens of a multi-stream rope model sit (`rope-streams.ts`). */
  readonly streams?: RopeStreams | null;
  /** The AltUp streams' class (`altup.ts`), for models with AltUp weights. */
  readonly AltUp?: typeof AltUp;
}

/** The lazily loaded parts a model of `config` needs (`altUp`: it has AltUp weights). */
export async function loadLazyModelParts(config: ModelConfig, altUp: boolean): Promise<LazyModelParts> {
  return {
    streams: config.ropeMulti ? new (await import('./rope-streams.js')).RopeStreams() : null,
    ...(altUp ? { AltUp: (await import('./altup.js')).AltUp } : {}),
  };
}

/**
 * The M-RoPE streams of `lazy` (null for other models), after checking it holds what a model of `config` needs
 * (`altUp`: it has AltUp weights) — a programming error otherwise: `loadTransformer` loads them.
 */
export function checkLazyParts(config: ModelConfig, altUp: boolean, lazy: LazyModelParts): RopeStreams | null {
  if ((config.ropeMulti && !lazy.streams) || (altUp && !lazy.AltUp))
    throw new Error('a multi-stream rope or AltUp model needs its lazily loaded parts (loadLazyModelParts)');
  return lazy.streams ?? null;
}
