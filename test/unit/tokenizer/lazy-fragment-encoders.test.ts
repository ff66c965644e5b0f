/**
 * The WordPiece / unigram / RWKV / PLaMo-2 encoders are a lazy chunk (src/tokenizer/fragment-encoders.ts): a fresh
 * module graph (as a page has before anything loaded it) refuses `createTokenizer` on such a vocabulary with a clear
 * `LlmError('tokenizer')`, builds SPM/BPE tokenizers without the chunk, and `loadTokenizer` fetches it and gives the
 * same tokens as the preloaded path. `loadChunk` turns a failed fetch into `LlmError('network')` naming the part.
 */

import { describe, expect, it, vi } from 'vitest';
import { LlmError } from '../../../src/errors.js';
import type { GgufValue } from '../../../src/gguf/types.js';
import { loadChunk } from '../../../src/io/load-chunk.js';
import { createTokenizer } from '../../../src/tokenizer/index.js';
import { llmError } from '../../helpers/llm-error.js';
import { syntheticVocabs } from './synthetic-vocabs.js';

type Meta = Record<string, GgufValue>;
const byName = (name: string): Meta => ({ ...syntheticVocabs().find((v) => v.name === name)!.metadata });
const TEXT = 'Hello wörld, 東京 abc t5t5';

/** The tokenizer module in a fresh module graph: nothing loaded into its encoder registry yet. */
async function freshTokenizerModule(): Promise<typeof import('../../../src/tokenizer/index.js')> {
  vi.resetModules();
  return import('../../../src/tokenizer/index.js');
}

describe('lazily loaded tokenizer encoders', () => {
  it.each(['synthetic-ugm', 'synthetic-rwkv', 'synthetic-plamo2'])(
    '%s: createTokenizer refuses before the chunk loads, loadTokenizer loads it',
    async (name) => {
      const fresh = await freshTokenizerModule();
      let caught: unknown = null;
      try {
        fresh.createTokenizer(byName(name));
      } catch (e) {
        caught = e;
      }
      expect(caught).toMatchObject({ name: 'LlmError', code: 'tokenizer' });
      expect((caught as Error).message).toMatch(/encoder is not loaded; use loadTokenizer/);
      const tok = await fresh.loadTokenizer(byName(name));
      const ids = tok.encode(TEXT);
      expect(ids.length).toBeGreaterThan(0);
      expect(ids).toEqual(createTokenizer(byName(name)).encode(TEXT));
      // Once loaded, the synchronous factory works too.
      expect(fresh.createTokenizer(byName(name)).encode(TEXT)).toEqual(ids);
    },
  );

  it('builds BPE and test vocabularies without the chunk', async () => {
    const fresh = await freshTokenizerModule();
    for (const name of ['synthetic-gemma4', 'synthetic-whitespace', 'synthetic-test']) {
      expect(fresh.createTokenizer(byName(name)).encode(TEXT)).toEqual(createTokenizer(byName(name)).encode(TEXT));
    }
  });
});

describe('loadChunk', () => {
  it('names the part whose file failed to load, and passes an LlmError through', async () => {
    const fetchFailed = new TypeError('Failed to fetch dynamically imported module: x.js');
    const e = await llmError(loadChunk('encoder model', () => Promise.reject(fetchFailed)));
    expect(e.code).toBe('network');
    expect(e.message).toContain('could not load the encoder model code');
    expect(e.message).toContain('Failed to fetch dynamically imported module');
    expect(e.cause).toBe(fetchFailed);
    const own = await llmError(loadChunk('x', () => Promise.reject(new LlmError('aborted', 'stop'))));
    expect(own.code).toBe('aborted');
    expect(await loadChunk('x', () => Promise.resolve(42))).toBe(42);
  });
});
