/**
 * The batched-choices measurement shared by the Node driver (choices-run.ts, process CPU time) and the bench page
 * (browser/page-choices.ts, the renderer's CPU time read over the DevTools protocol): on one loaded engine with n
 * slots, aggregate decode tok/s of a request with `n` choices (decoded together, one batched forward per token) ÷
 * the same request with n = 1 — greedy, the same prompt. The decode part is isolated by difference: a request with
 * max_tokens = decode minus one with max_tokens = 1 (same prefill, KV copies and first samples), so aggregate tok/s
 * = the extra completion tokens of all choices ÷ the extra time, sampling and readbacks included. Best of `repeats`
 * after a warm-up, in CPU time and in wall time.
 */

import type { LocalEngine } from '../../src/api/local-engine.js';

/** What to measure. */
export interface ChoicesSpec {
  readonly modelPath: string;
  readonly backend: 'wasm' | 'cpu' | 'webgpu';
  readonly threads: number;
  readonly decode: number;
  /** Choices of the batched request (2…8). */
  readonly n: number;
  /** Measured requests per n (best kept; default 2). */
  readonly repeats?: number;
}

/** The figures. */
export interface ChoicesResult {
  readonly backend: string;
  /** Where it ran: Node (absent in older reports) or the bench page in Chromium. */
  readonly host?: 'node' | 'chromium';
  readonly threads: number;
  readonly n: number;
  /** Decode tok/s of one choice, per CPU second. */
  readonly singleTokPerCpuS: number;
  /** All n choices' decode tokens per CPU second. */
  readonly batchedTokPerCpuS: number;
  /** batched ÷ single, CPU time; null when a rate was too short to measure (a tiny model, few steps). */
  readonly ratio: number | null;
  /** The same in wall time (noisy on a loaded machine). */
  readonly singleTokPerS: number;
  readonly batchedTokPerS: number;
  readonly wallRatio: number | null;
}

/** The clocks of a host: CPU milliseconds of the process doing the work (monotonic), wall milliseconds. */
export interface ChoicesClock {
  readonly cpuMs: () => number | Promise<number>;
  readonly wallMs: () => number;
}

/** Measures `spec`'s n = 1 and n = `spec.n` rates on `engine` (created with at least n slots). */
export async function measureChoicesOn(
  engine: LocalEngine,
  spec: Pick<ChoicesSpec, 'decode' | 'n' | 'repeats' | 'threads'>,
  clock: ChoicesClock,
  host: 'node' | 'chromium',
): Promise<ChoicesResult> {
  /** [completion tokens, CPU ms, wall ms] of one request. */
  const request = async (n: number, maxTokens: number): Promise<[number, number, number]> => {
    engine.context.cache.clear();
    const c0 = await clock.cpuMs();
    const t0 = clock.wallMs();
    const r = await engine.completions.create({ prompt: 'The data:', temperature: 0, max_tokens: maxTokens, n });
    const t1 = clock.wallMs();
    return [r.usage.completion_tokens, (await clock.cpuMs()) - c0, t1 - t0];
  };
  /** [tok per CPU s, tok per wall s] of the decode steps of an n-choice request, best of the repeats. */
  const rates = async (n: number): Promise<[number, number]> => {
    await request(n, spec.decode); // warm-up
    let cpu = 0;
    let wall = 0;
    for (let i = 0; i < (spec.repeats ?? 2); i++) {
      const [t1, c1, w1] = await request(n, 1);
      const [tD, cD, wD] = await request(n, spec.decode);
      if (cD > c1) cpu = Math.max(cpu, ((tD - t1) * 1000) / (cD - c1));
      if (wD > w1) wall = Math.max(wall, ((tD - t1) * 1000) / (wD - w1));
    }
    return [cpu, wall];
  };
  const [singleCpu, singleWall] = await rates(1);
  const [batchedCpu, batchedWall] = await rates(spec.n);
  const r1 = (v: number): number => Math.round(v * 10) / 10;
  // A rate is a difference of two timed runs: 0 when it fell under the timer's resolution, and then no ratio.
  const r2 = (a: number, b: number): number | null => (a > 0 && b > 0 ? Math.round((a / b) * 100) / 100 : null);
  return {
    backend: engine.info.backend.description,
    host,
    threads: spec.threads,
    n: spec.n,
    singleTokPerCpuS: r1(singleCpu),
    batchedTokPerCpuS: r1(batchedCpu),
    ratio: r2(batchedCpu, singleCpu),
    singleTokPerS: r1(singleWall),
    batchedTokPerS: r1(batchedWall),
    wallRatio: r2(batchedWall, singleWall),
  };
}
