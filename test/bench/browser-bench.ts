/**
 * Browser side of the benchmark (placeholder until written): wllama and our WASM in headless Chromium.
 */
import type { RunResult, Workload } from './bench-types.js';

/** Options of `runBrowserBench`. */
export interface BrowserBenchOptions {
  readonly modelPath: string;
  readonly threads: readonly number[];
  readonly workload: Workload;
  readonly rounds: number;
  readonly log: (line: string) => void;
}

/** Runs the browser cases. */
export async function runBrowserBench(_o: BrowserBenchOptions): Promise<RunResult[]> {
  throw new Error('not implemented yet');
}
