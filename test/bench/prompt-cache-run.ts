/**
 * One measurement of the persisted prompt cache for `npm run bench` (issue 20: time to first token with a
 * 1,000-token system prompt after a page reload ≤ 0.25× a cold prefill), in its own process — a new process is the
 * Node analogue of a page reload (nothing in memory survives it; the entries live in a folder, the Node store of the
 * persisted cache). `cold`: an engine with the persisted cache on over an empty folder answers a chat request whose
 * system prompt is about `systemTokens` tokens (`max_tokens: 1`: the request's wall time is its time to first token);
 * the engine then stores the system prompt's KV there by itself. `reload`: a fresh engine over that folder restores
 * the entry while it is created and answers the same request. Both engines are warmed up (createEngine's warmup) and
 * greedy. Reported: the request's time to first token, the prompt and cached tokens (`usage`), how long
 * `createEngine` took and, within it, the restore (first to last call on the store), and the stored bytes.
 * Run: node --experimental-wasm-relaxed-simd scripts/run-ts.mjs test/bench/prompt-cache-run.ts '<PromptCacheSpec JSON>'
 */

import { createEngine } from '../../src/api/create-engine.js';
import { filePromptCacheStore, type PromptCacheStore } from '../../src/io/prompt-cache-store.js';

/** What to measure. */
export interface PromptCacheSpec {
  readonly modelPath: string;
  readonly mode: 'cold' | 'reload';
  /** The folder holding the persisted entries (empty for `cold`). */
  readonly dir: string;
  readonly threads: number;
  /** About how many tokens the system prompt has (default 1000). */
  readonly systemTokens?: number;
}

/** One measurement. */
export interface PromptCacheRun {
  readonly mode: 'cold' | 'reload';
  /** The chat request's wall time (`max_tokens: 1`): its time to first token. */
  readonly ttftMs: number;
  readonly promptTokens: number;
  /** Prompt tokens served from the cache (`usage.prompt_tokens_details.cached_tokens`). */
  readonly cachedTokens: number;
  readonly systemTokens: number;
  /** createEngine until it resolved (parse, upload, warmup, restore). */
  readonly createMs: number;
  /** Within createEngine: first to last call on the store (list, rows read and checked, record touched); 0 if none. */
  readonly restoreMs: number;
  /** Bytes of the stored entries after the run. */
  readonly storedBytes: number;
}

/** A deterministic system prompt of about `tokens` tokens for this engine's tokenizer. */
async function systemPrompt(tokenize: (t: string) => Promise<number[]>, tokens: number): Promise<string> {
  const line = (i: number) =>
    `Rule ${i}: answer in plain words, cite the section you used, and keep each reply under ${(i % 7) + 3} sentences.`;
  const lines: string[] = [];
  let n = 0;
  while (n < tokens) {
    lines.push(line(lines.length + 1));
    n = (await tokenize(lines.join('\n'))).length;
  }
  return lines.join('\n');
}

/** A store that records when it was first and last called (the restore's window inside createEngine). */
function timedStore(inner: PromptCacheStore, calls: number[]): PromptCacheStore {
  const t = <T>(p: Promise<T>): Promise<T> => {
    calls.push(performance.now());
    return p.finally(() => calls.push(performance.now()));
  };
  return {
    list: () => t(inner.list()),
    readRows: (id) => t(inner.readRows(id)),
    put: (r, rows) => t(inner.put(r, rows)),
    touch: (r) => t(inner.touch(r)),
    delete: (id) => t(inner.delete(id)),
  };
}

/** Measures one spec in this process. */
export async function measurePromptCache(spec: PromptCacheSpec): Promise<PromptCacheRun> {
  const calls: number[] = [];
  const store = filePromptCacheStore(spec.dir);
  const t0 = performance.now();
  const engine = await createEngine({
    model: spec.modelPath,
    backend: 'wasm',
    threads: spec.threads,
    persistedCache: { store: timedStore(store, calls) },
  });
  const createMs = performance.now() - t0;
  const restoreMs = calls.length > 0 ? calls[calls.length - 1]! - calls[0]! : 0;
  const system = await systemPrompt((t) => engine.tokenize(t), spec.systemTokens ?? 1000);
  const systemTokens = (await engine.tokenize(system)).length;
  const t1 = performance.now();
  const res = await engine.chat.completions.create({
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: 'Which rule covers citations?' },
    ],
    temperature: 0,
    max_tokens: 1,
  });
  const ttftMs = performance.now() - t1;
  const storedBytes = (await store.list()).reduce((n, r) => n + r.bytes, 0);
  await engine.unload();
  return {
    mode: spec.mode,
    ttftMs,
    promptTokens: res.usage.prompt_tokens,
    cachedTokens: res.usage.prompt_tokens_details?.cached_tokens ?? 0,
    systemTokens,
    createMs,
    restoreMs,
    storedBytes,
  };
}

/** Child-process entry: prints the result as the last stdout line. */
export async function main(args: string[]): Promise<number> {
  const r = await measurePromptCache(JSON.parse(args[0] ?? '{}') as PromptCacheSpec);
  process.stdout.write(`\n${JSON.stringify(r)}\n`);
  process.exit(0); // an engine holds worker threads; the figures are out
}
