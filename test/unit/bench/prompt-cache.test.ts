/**
 * Smoke test of the bench's persisted prompt-cache section (test/bench/prompt-cache.ts) on stories260K, in process:
 * a cold engine stores its system prompt's KV in a folder, a fresh engine over that folder restores it and serves
 * the same request's system prompt from it; the per-round ratio and the Markdown row. Never asserts on speed.
 */

import { describe, expect, it } from 'vitest';
import { promptCacheMarkdown, runPromptCache } from '../../bench/prompt-cache.js';
import { measurePromptCache } from '../../bench/prompt-cache-run.js';
import { sharedPath } from '../../helpers/shared-path.js';

describe('bench: persisted prompt cache', () => {
  it('stores the system prompt cold, restores it after a reload and renders the section', async () => {
    const lines: string[] = [];
    const r = await runPromptCache({
      modelPath: sharedPath('models', 'stories260K.gguf'),
      threads: 1,
      rounds: 1,
      systemTokens: 60,
      run: measurePromptCache,
      log: (l) => lines.push(l),
    });
    expect(r.runs.map((x) => x.mode)).toEqual(['cold', 'reload']);
    const [cold, reload] = r.runs;
    expect(cold.cachedTokens).toBe(0);
    expect(cold.storedBytes).toBeGreaterThan(0);
    // The reloaded engine serves at least the system prompt from the restored entry.
    expect(reload.cachedTokens).toBeGreaterThanOrEqual(reload.systemTokens);
    expect(reload.cachedTokens).toBeLessThan(reload.promptTokens);
    expect(r.systemTokens).toBeGreaterThanOrEqual(60);
    for (const v of [r.coldTtftMs, r.reloadTtftMs, r.ratio, r.restoreMs, r.ratioWithRestore])
      expect(Number.isFinite(v) && v >= 0).toBe(true);
    expect(lines).toHaveLength(1);
    const md = promptCacheMarkdown(r);
    expect(md).toContain('## Persisted prompt cache');
    expect(md).toMatch(/\| 1 \| \d+ tokens \| \d+ \(\d+\) \| [\d.]+ ms/);
  }, 60_000);
});
