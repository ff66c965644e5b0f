/**
 * The "persisted prompt cache" section of `npm run bench` (issue 20): time to first token of a chat request with a
 * 1,000-token system prompt after a reload (a new process restoring the stored system-prompt KV from a folder) ÷ the
 * same request cold (nothing stored), WASM. Per round: a `cold` process over an empty folder (it stores the entry),
 * then a `reload` process over it (test/bench/prompt-cache-run.ts); the ratio is taken per round and its median
 * reported. Target ≤ 0.25×.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { median, round } from './bench-types.js';
import type { PromptCacheRun, PromptCacheSpec } from './prompt-cache-run.js';

/** The section's result (medians over rounds). */
export interface PromptCacheResult {
  readonly threads: number;
  readonly rounds: number;
  readonly systemTokens: number;
  readonly promptTokens: number;
  /** Prompt tokens the reloaded engine served from the restored entry. */
  readonly cachedTokens: number;
  readonly coldTtftMs: number;
  readonly reloadTtftMs: number;
  /** Median over rounds of reload ÷ cold TTFT. */
  readonly ratio: number;
  /** The restore inside the reloaded engine's createEngine (store list, rows read + sha256-checked, KV written). */
  readonly restoreMs: number;
  /** (reload TTFT + restore) ÷ cold TTFT: the restore counted as part of the wait. */
  readonly ratioWithRestore: number;
  readonly storedMiB: number;
  readonly runs: readonly PromptCacheRun[];
}

/** Runs `rounds` rounds of cold + reload; `run` executes one spec in a child process. */
export async function runPromptCache(o: {
  readonly modelPath: string;
  readonly threads: number;
  readonly rounds: number;
  /** About how many tokens the system prompt has (default 1000). */
  readonly systemTokens?: number;
  readonly run: (spec: PromptCacheSpec) => Promise<PromptCacheRun>;
  readonly log: (line: string) => void;
}): Promise<PromptCacheResult> {
  const runs: PromptCacheRun[] = [];
  const pairs: { cold: PromptCacheRun; reload: PromptCacheRun }[] = [];
  for (let r = 0; r < o.rounds; r++) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'webgguf-prompt-cache-bench-'));
    try {
      const spec = { modelPath: o.modelPath, dir, threads: o.threads, systemTokens: o.systemTokens ?? 1000 };
      const cold = await o.run({ ...spec, mode: 'cold' });
      const reload = await o.run({ ...spec, mode: 'reload' });
      runs.push(cold, reload);
      pairs.push({ cold, reload });
      o.log(
        `prompt cache round ${r + 1}: cold TTFT ${round(cold.ttftMs, 0)} ms, after reload ${round(reload.ttftMs, 0)} ms ` +
          `(${reload.cachedTokens}/${reload.promptTokens} tokens cached, restore ${round(reload.restoreMs, 0)} ms)`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const m = (f: (p: { cold: PromptCacheRun; reload: PromptCacheRun }) => number) => median(pairs.map(f));
  return {
    threads: o.threads,
    rounds: pairs.length,
    systemTokens: m((p) => p.cold.systemTokens),
    promptTokens: m((p) => p.cold.promptTokens),
    cachedTokens: m((p) => p.reload.cachedTokens),
    coldTtftMs: round(
      m((p) => p.cold.ttftMs),
      1,
    ),
    reloadTtftMs: round(
      m((p) => p.reload.ttftMs),
      1,
    ),
    ratio: round(
      m((p) => p.reload.ttftMs / p.cold.ttftMs),
      3,
    ),
    restoreMs: round(
      m((p) => p.reload.restoreMs),
      1,
    ),
    ratioWithRestore: round(
      m((p) => (p.reload.ttftMs + p.reload.restoreMs) / p.cold.ttftMs),
      3,
    ),
    storedMiB: round(m((p) => p.cold.storedBytes) / 2 ** 20, 1),
    runs,
  };
}

/** The section as Markdown. */
export function promptCacheMarkdown(r: PromptCacheResult): string {
  const ok = (x: number) => (x <= 0.25 ? '✔' : '✘');
  return [
    `## Persisted prompt cache (Node, a folder; WASM, ${r.threads} thread${r.threads > 1 ? 's' : ''})`,
    '',
    '| rounds | system prompt | prompt (cached after reload) | TTFT cold | TTFT after reload | reload ÷ cold | restore in createEngine | (reload + restore) ÷ cold | stored |',
    '|---|---|---|---|---|---|---|---|---|',
    `| ${r.rounds} | ${r.systemTokens} tokens | ${r.promptTokens} (${r.cachedTokens}) | ${r.coldTtftMs} ms | ${r.reloadTtftMs} ms | ` +
      `**${r.ratio}×** ${ok(r.ratio)} (≤ 0.25×) | ${r.restoreMs} ms | ${r.ratioWithRestore}× ${ok(r.ratioWithRestore)} | ${r.storedMiB} MiB |`,
    '',
  ].join('\n');
}
