/**
 * The persisted prompt cache is a lazy chunk (src/api/lazy-persisted-cache.ts): off without options, and a chunk that
 * fails to load never fails the request that saves automatically (as `saveOnce` swallows its own store errors).
 */

import { describe, expect, it, vi } from 'vitest';
import { lazyPersistedCache, saveAutomatically } from '../../../src/api/lazy-persisted-cache.js';
import type { PromptCache } from '../../../src/engine/prompt-cache.js';
import type { Transformer } from '../../../src/model/model.js';

vi.mock('../../../src/engine/persisted-cache.js', () => {
  throw new Error('chunk failed to load');
});

const transformer = {} as Transformer;
const cache = {} as PromptCache;

describe('lazy persisted prompt cache', () => {
  it('is off (no load started) without options or with false', () => {
    expect(lazyPersistedCache(undefined, transformer, cache, 'm')).toEqual({ auto: false, cache: null });
    expect(lazyPersistedCache(false, transformer, cache, 'm')).toEqual({ auto: false, cache: null });
  });

  it('auto follows the option (default true)', () => {
    expect(lazyPersistedCache({}, transformer, cache, 'm').auto).toBe(true);
    expect(lazyPersistedCache({ auto: false }, transformer, cache, 'm').auto).toBe(false);
  });

  it('a chunk that cannot load rejects where it is awaited, but the automatic save resolves', async () => {
    const lazy = lazyPersistedCache({}, transformer, cache, 'm');
    await expect(lazy.cache).rejects.toThrow();
    await expect(saveAutomatically(lazy.cache!, 'k', [1, 2, 3])).resolves.toBeUndefined();
  });
});
