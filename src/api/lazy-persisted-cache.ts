/**
 * The engine's persisted prompt cache, loaded with its code on first use: `engine/persisted-cache.ts` (and the
 * KV serialisation under it) is a lazy chunk, so the script-tag core stays within its size budget.
 */

import type { PersistedPromptCache, PersistedPromptCacheOptions } from '../engine/persisted-cache.js';
import type { PromptCache } from '../engine/prompt-cache.js';
import type { Transformer } from '../model/model.js';

/** Whether new system prompts persist automatically, and the cache once its code has loaded (null: off). */
export interface LazyPersistedCache {
  readonly auto: boolean;
  readonly cache: Promise<PersistedPromptCache> | null;
}

/** Starts loading the persisted cache's code when `options` turn it on (absent or false: off). */
export function lazyPersistedCache(
  options: false | PersistedPromptCacheOptions | undefined,
  transformer: Transformer,
  cache: PromptCache,
  model: string,
): LazyPersistedCache {
  if (options === undefined || options === false) return { auto: false, cache: null };
  const loaded = import('../engine/persisted-cache.js').then(
    (m) => new m.PersistedPromptCache(transformer, cache, model, options),
  );
  loaded.catch(() => undefined); // a chunk that fails to load is reported where it is used, not as an unhandled rejection
  return { auto: options.auto !== false, cache: loaded };
}

/** The automatic save of a new prefix: as `saveOnce`'s own errors, a cache whose code cannot load never fails a request. */
export async function saveAutomatically(cache: Promise<PersistedPromptCache>, key: string, tokens: readonly number[]) {
  await cache.then((c) => c.saveOnce(key, tokens)).catch(() => undefined);
}
