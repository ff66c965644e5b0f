/**
 * The in-thread engine as its own ES module, for the script-tag build: `create-engine-lazy.ts` imports it on the first
 * `WebGGUF.createEngine` call, so pages that run the engine in a worker (the documented script-tag use) never
 * download the tokenizer, templates, model and backends twice (once for the page, once for the worker).
 *
 * It is bundled as a worker script (`?worker&url`), and worker bundles drop their entry's exports, so the module hands
 * its function over through a registered symbol on `globalThis` when it runs.
 */
import { createEngine } from './create-engine.js';

/** The `globalThis` key under which this module registers `createEngine`. */
export const IN_THREAD_ENGINE_KEY: unique symbol = Symbol.for('webgguf.in-thread-engine') as never;

(globalThis as Record<symbol, unknown>)[IN_THREAD_ENGINE_KEY] = createEngine;
