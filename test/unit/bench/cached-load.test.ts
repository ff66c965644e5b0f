/**
 * Smoke test of the bench's cached-load section (test/bench/cached-load.ts) on stories260K, in process: a plain read
 * and a createEngine-until-ready run per round, per-round ratios, MB/s, RSS growth, and the Markdown row. Never
 * asserts on speed.
 */

import { describe, expect, it } from 'vitest';
import { cachedLoadMarkdown, runCachedLoad } from '../../bench/cached-load.js';
import { measureCachedLoad } from '../../bench/cached-load-run.js';
import { sharedPath } from '../../helpers/shared-path.js';

describe('bench: cached load', () => {
  it('measures read and ready per round and renders the section', async () => {
    const lines: string[] = [];
    const r = await runCachedLoad({
      modelPath: sharedPath('models', 'stories260K.gguf'),
      backends: ['wasm'],
      threads: 1,
      rounds: 2,
      run: measureCachedLoad,
      log: (l) => lines.push(l),
    });
    expect(r.runs.map((x) => x.mode)).toEqual(['read', 'ready', 'ready', 'read']); // reversed on odd rounds
    expect(r.modelBytes).toBeGreaterThan(1e6);
    const [row] = r.rows;
    expect(row.backend).toBe('wasm');
    for (const v of [row.readMs, row.readyMs, row.ratio, row.readMBps, row.readyMBps, row.loadMs, row.warmupMs])
      expect(Number.isFinite(v) && v >= 0).toBe(true);
    expect(lines).toHaveLength(4);
    const md = cachedLoadMarkdown(r);
    expect(md).toContain('## Cached load');
    expect(md).toMatch(/\| wasm \| 2 \| \d+ ms/);
  }, 60_000);
});
