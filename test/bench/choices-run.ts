/**
 * Batched choices, for `npm run bench`: on one model and backend, aggregate decode tok/s of a request with `n`
 * choices (decoded together, one batched forward per token) ÷ the same request with n = 1 — greedy, the same prompt,
 * an engine with n slots. The decode part is isolated by difference: a request with max_tokens = decode minus one
 * with max_tokens = 1 (same prefill, KV copies and first samples), so aggregate tok/s = the extra completion tokens
 * of all choices ÷ the extra time, sampling and readbacks included. Measured in process CPU time (steady on a
 * shared machine; one thread = one core) and in wall time; best of `repeats` after a warm-up. Prints one JSON line.
 * Run: node --experimental-wasm-relaxed-simd scripts/run-ts.mjs test/bench/choices-run.ts '{"modelPath":"…","backend":"wasm","threads":1,"decode":32,"n":4}'
 */

import { createEngine } from '../../src/api/create-engine.js';
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

/** Measures one spec. */
export async function measureChoices(spec: ChoicesSpec): Promise<ChoicesResult> {
  const engine = (await createEngine({
    model: spec.modelPath,
    backend: spec.backend,
    threads: spec.threads,
    contextLength: 256,
    slots: spec.n,
  })) as LocalEngine;
  try {
    /** [completion tokens, CPU ms, wall ms] of one request. */
    const request = async (n: number, maxTokens: number): Promise<[number, number, number]> => {
      engine.context.cache.clear();
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const r = await engine.completions.create({ prompt: 'The data:', temperature: 0, max_tokens: maxTokens, n });
      const c = process.cpuUsage(c0);
      return [r.usage.completion_tokens, (c.user + c.system) / 1000, performance.now() - t0];
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
      threads: spec.threads,
      n: spec.n,
      singleTokPerCpuS: r1(singleCpu),
      batchedTokPerCpuS: r1(batchedCpu),
      ratio: r2(batchedCpu, singleCpu),
      singleTokPerS: r1(singleWall),
      batchedTokPerS: r1(batchedWall),
      wallRatio: r2(batchedWall, singleWall),
    };
  } finally {
    await engine.unload();
  }
}

/** Entry for scripts/run-ts.mjs: measures the spec given as JSON and prints the result as one JSON line. */
export async function main(args: string[]): Promise<number> {
  if (!args[0]) {
    console.error('usage: choices-run.ts \'{"modelPath": …, "backend": "wasm", "threads": 1, "decode": 32, "n": 4}\'');
    return 2;
  }
  console.log(JSON.stringify(await measureChoices(JSON.parse(args[0]) as ChoicesSpec)));
  return 0;
}
