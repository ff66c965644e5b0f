/**
 * The "cached load" section of `npm run bench` (issue 20): how long a model already on this machine takes to become
 * ready (header parsed, weights uploaded, warmed up) compared with just reading its bytes from the same store in the
 * same run. Each round runs, in separate processes, a plain read of the file and a `createEngine` per backend, the
 * order reversed on odd rounds; the ratio is taken per round (same machine load) and its median reported, with MB/s
 * and the peak RSS growth against the model size (target: ready ≤ 1.5× read, RSS ≤ model + 10 %).
 */

import type { CachedLoadRun, CachedLoadSpec } from './cached-load-run.js';
import { median, round } from './bench-types.js';

/** Medians of one backend over the rounds. */
export interface CachedLoadRow {
  readonly backend: string;
  readonly rounds: number;
  readonly readMs: number;
  readonly readyMs: number;
  /** Median over rounds of ready ÷ read of the same round. */
  readonly ratio: number;
  readonly readMBps: number;
  readonly readyMBps: number;
  readonly loadMs: number;
  readonly warmupMs: number;
  readonly readyCpuMs: number;
  readonly rssGrowthMiB: number;
  /** Peak RSS growth ÷ model size. */
  readonly rssPerModel: number;
}

/** The section's result. */
export interface CachedLoadResult {
  readonly modelBytes: number;
  readonly threads: number;
  readonly rows: readonly CachedLoadRow[];
  readonly runs: readonly CachedLoadRun[];
}

/** Runs `rounds` rounds of read + ready per backend; `run` executes one spec in a child process. */
export async function runCachedLoad(o: {
  readonly modelPath: string;
  readonly backends: readonly ('wasm' | 'webgpu')[];
  readonly threads: number;
  readonly rounds: number;
  readonly run: (spec: CachedLoadSpec) => Promise<CachedLoadRun>;
  readonly log: (line: string) => void;
}): Promise<CachedLoadResult> {
  const runs: CachedLoadRun[] = [];
  const perRound: { read: CachedLoadRun; ready: CachedLoadRun[] }[] = [];
  for (let r = 0; r < o.rounds; r++) {
    const specs: CachedLoadSpec[] = [
      { modelPath: o.modelPath, mode: 'read', backend: 'wasm', threads: o.threads },
      ...o.backends.map((backend) => ({ modelPath: o.modelPath, mode: 'ready' as const, backend, threads: o.threads })),
    ];
    if (r % 2 === 1) specs.reverse();
    const got: CachedLoadRun[] = [];
    for (const s of specs) {
      const res = await o.run(s);
      got.push(res);
      runs.push(res);
      o.log(
        `cached load round ${r + 1} ${s.mode} ${s.mode === 'ready' ? s.backend : ''}: ${round(res.ms, 0)} ms${Number.isFinite(res.rssGrowthMiB) ? `, RSS +${round(res.rssGrowthMiB, 0)} MiB` : ''}`,
      );
    }
    perRound.push({ read: got.find((g) => g.mode === 'read')!, ready: got.filter((g) => g.mode === 'ready') });
  }
  const modelBytes = runs[0]?.bytes ?? 0;
  const mbps = (ms: number) => round(modelBytes / 1e6 / (ms / 1000), 1);
  const rows = o.backends.map((backend): CachedLoadRow => {
    const pairs = perRound.map((p) => ({ read: p.read, ready: p.ready.find((x) => x.backend === backend)! }));
    const readMs = median(pairs.map((p) => p.read.ms));
    const readyMs = median(pairs.map((p) => p.ready.ms));
    const rss = median(pairs.map((p) => p.ready.rssGrowthMiB));
    return {
      backend,
      rounds: pairs.length,
      readMs: round(readMs, 0),
      readyMs: round(readyMs, 0),
      ratio: round(median(pairs.map((p) => p.ready.ms / p.read.ms)), 2),
      readMBps: mbps(readMs),
      readyMBps: mbps(readyMs),
      loadMs: round(median(pairs.map((p) => p.ready.loadMs ?? 0)), 0),
      warmupMs: round(median(pairs.map((p) => p.ready.warmupMs ?? 0)), 0),
      readyCpuMs: round(median(pairs.map((p) => p.ready.cpuMs)), 0),
      rssGrowthMiB: round(rss, 0),
      rssPerModel: round((rss * 2 ** 20) / modelBytes, 2),
    };
  });
  return { modelBytes, threads: o.threads, rows, runs };
}

/** The section as Markdown; `where` names the store (default: Node, a local file). */
export function cachedLoadMarkdown(r: CachedLoadResult, where = 'Node, local file'): string {
  const lines = [
    `## Cached load (${where}, ${(r.modelBytes / 2 ** 20).toFixed(0)} MiB, ${r.threads} thread${r.threads > 1 ? 's' : ''})`,
    '',
    '| backend | rounds | read only | ready (parse + upload + warmup) | ready ÷ read (median of per-round) | load / warmup | ready CPU | peak RSS growth (÷ model) |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const x of r.rows) {
    lines.push(
      `| ${x.backend} | ${x.rounds} | ${x.readMs} ms (${x.readMBps} MB/s) | ${x.readyMs} ms (${x.readyMBps} MB/s) | ` +
        `**${x.ratio}×** ${x.ratio <= 1.5 ? '✔' : '✘'} (≤ 1.5×) | ${x.loadMs} / ${x.warmupMs} ms | ${x.readyCpuMs} ms | ` +
        (Number.isFinite(x.rssGrowthMiB)
          ? `${x.rssGrowthMiB} MiB (${x.rssPerModel}×) ${x.rssPerModel <= 1.1 ? '✔' : '✘'} |`
          : '– (no RSS in a page) |'),
    );
  }
  return `${lines.join('\n')}\n`;
}
