/**
 * `createEngine` of the script-tag build (vite.config.ts, iife mode, puts this module in place of `create-engine.ts`
 * for `src/index.ts`): the same function, but the in-thread engine is an ES module next to webgguf.js
 * (`in-thread-entry.ts`, built like the worker) imported on first use. The script a page loads then holds only the
 * worker clients, the model store and the errors; the engine itself is downloaded once, by whichever host runs it.
 */
import engineModuleUrl from './in-thread-entry.ts?worker&url';
import type { Engine, EngineOptions } from './engine.js';
import { LlmError, isLlmError } from '../errors.js';

export { modelIdentityOf } from './model-identity.js';

type CreateEngine = (options: EngineOptions) => Promise<Engine>;
/** Where in-thread-entry.ts registers its `createEngine` (a worker bundle keeps no exports). */
const KEY = Symbol.for('webgguf.in-thread-engine');
let loading: Promise<CreateEngine> | undefined;

async function loadEngineModule(): Promise<CreateEngine> {
  await import(/* @vite-ignore */ engineModuleUrl);
  const create = (globalThis as Record<symbol, unknown>)[KEY];
  if (typeof create !== 'function') {
    throw new LlmError(
      'feature-missing',
      `the in-thread engine module (${engineModuleUrl}) loaded but registered no engine`,
    );
  }
  return create as CreateEngine;
}

/** Loads `options.model` and returns an engine running in this thread (its code fetched on the first call). */
export async function createEngine(options: EngineOptions): Promise<Engine> {
  loading ??= loadEngineModule().catch((e: unknown) => {
    loading = undefined; // a failed fetch of the module may succeed on the next call
    throw isLlmError(e)
      ? e
      : new LlmError('network', `could not load the in-thread engine module (${engineModuleUrl})`, { cause: e });
  });
  return (await loading)(options);
}
