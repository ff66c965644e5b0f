/**
 * Shapes shared by the benchmark harness: one measured run (`RunResult`, ours or a peer's), the bandwidth probe's
 * result, and the whole report written as JSON. Every runtime's runner prints exactly one `RunResult` as JSON on the
 * last line of its stdout, so the orchestrator can run each case in its own process.
 */

import { promptTokenIds } from '../../scripts/deterministic-random.mjs';
import type { CachedLoadResult } from './cached-load.js';
import type { PromptCacheResult } from './prompt-cache.js';

/** Which runtime produced a figure. */
export type RuntimeId =
  | 'webgguf-wasm'
  | 'webgguf-webgpu'
  | 'webgguf-cpu'
  | 'llama.cpp-cpu'
  | 'llama.cpp-vulkan'
  | 'llama.cpp-cuda'
  | 'wllama';

/** The work a run measures (the same for every runtime in one report). */
export interface Workload {
  /** Prompt lengths timed as prefill (each from an empty KV cache). */
  readonly promptLengths: readonly number[];
  /** Tokens decoded one at a time after the first prompt. */
  readonly decodeTokens: number;
  /** Seed of the pseudo-random prompt token ids (identical across runtimes). */
  readonly seed: number;
  /** Prompt ids are drawn from [lo, hi) (ordinary tokens of the model's vocabulary). */
  readonly tokenRange: readonly [number, number];
}

/** One measured run of one runtime at one thread count. */
export interface RunResult {
  readonly runtime: RuntimeId;
  /** Where it ran: Node (default when absent) or headless Chromium. */
  readonly host?: 'node' | 'chromium';
  /** Backend details, e.g. 'wasm relaxed-simd ×2 threads' or 'llama.cpp 3.22.1 CPU'. */
  readonly backend: string;
  readonly threads: number;
  readonly model: string;
  /** Our backends: the KV cache's type and bytes (K and V, all slots, at the run's context length). */
  readonly kv?: { readonly type: string; readonly bytes: number };
  /** Milliseconds: header parse, weight upload (or the peer's whole model load), context creation. */
  readonly loadMs: { readonly parse: number; readonly upload: number; readonly total: number };
  /** Milliseconds of the warm-up (a short prompt and a few decode steps, not counted). */
  readonly warmupMs: number;
  /** Prefill tokens/s per prompt length (key: the length as a string). */
  readonly prefillTokPerS: Readonly<Record<string, number>>;
  /** Time to first token for the first prompt length: prefill + the first sampled token, ms. */
  readonly ttftMs: number;
  /** Decode tokens/s: decodeTokens ÷ their total time. */
  readonly decodeTokPerS: number;
  /**
   * Process CPU time (user + system, all threads) per decoded token, ms. On a shared machine this is far steadier
   * than wall time for 1-thread runs; for more threads it also counts spin-waiting.
   */
  readonly decodeCpuMsPerToken: number;
  /** Median and spread of single decode steps, ms. */
  readonly decodeStepMs: { readonly median: number; readonly p10: number; readonly p90: number };
  /** Per-token decode time by op kind, ms (our backends only; null for peers). */
  readonly breakdownMs: Readonly<Record<string, number>> | null;
  /** WebGPU with timestamps: decode GPU ms per token by pipeline label (e.g. 'gemv.q4_0.f32.wg64'), largest first. */
  readonly breakdownByKernelMs?: Readonly<Record<string, number>>;
  /** The first prompt's prefill by op kind, ms for the whole prompt (our backends only; null for peers). */
  readonly prefillBreakdownMs?: Readonly<Record<string, number>> | null;
  /**
   * What the breakdown measures: 'wall-clock per op' (synchronous backends), 'GPU time per op (timestamp-query …)',
   * 'encode time only (…)' (WebGPU without timestamps), or a reason for none.
   */
  readonly breakdownSource: string;
  /** Peak resident set size of the process, MiB, and (ours) the backend's own memory (wasm heap), MiB. */
  readonly memoryMiB: { readonly peakRss: number; readonly backend: number | null };
  /** 1-minute load average when the run started and ended (the machine is shared). */
  readonly loadAvg: readonly [number, number];
  /** Anything unusual (fallbacks, skipped parts). */
  readonly notes: readonly string[];
}

/** Streaming-read bandwidth of WASM in this process. */
export interface BandwidthResult {
  readonly bytes: number;
  /** GB/s (1e9 bytes/s), best of the repeats, per thread count. */
  readonly gbPerS: Readonly<Record<string, number>>;
  readonly loadAvg: number;
}

/** A peer comparison: ours ÷ theirs for one metric at one thread count, median over rounds. */
export interface Ratio {
  readonly metric: 'decode' | 'decode-cpu-time' | 'prefill128' | 'prefill512';
  readonly threads: number;
  readonly ours: RuntimeId;
  /** Where ours ran when that is not the peer's host: our WASM in Chromium against native llama.cpp. */
  readonly oursHost?: 'chromium';
  readonly peer: RuntimeId;
  /** Median of ours ÷ median of theirs. */
  readonly ratio: number;
  /** The target from issue 8 (null when none). */
  readonly target: number | null;
}

/** The whole JSON report. */
export interface BenchReport {
  readonly version: 1;
  readonly startedAt: string;
  readonly command: string;
  readonly machine: {
    readonly cpus: number;
    readonly cpuModel: string;
    readonly node: string;
    readonly totalMemGiB: number;
  };
  readonly model: {
    readonly path: string;
    readonly shape: string;
    readonly quant: string;
    readonly bytes: number;
    readonly bytesPerToken: number;
  };
  readonly workload: Workload;
  readonly bandwidth: BandwidthResult | null;
  /** GPU memory bandwidth given with --gpu-bw (GB/s), for the GPU rows' roofline; null when not given. */
  readonly gpuBandwidthGbPerS: number | null;
  /** Every run, in the interleaved order they ran. */
  readonly runs: readonly RunResult[];
  /** Medians per (runtime, threads). */
  readonly summary: readonly SummaryRow[];
  readonly ratios: readonly Ratio[];
  readonly errors: readonly string[];
  /** The cached-load section (test/bench/cached-load.ts); absent in older reports, null when skipped. */
  readonly cachedLoad?: CachedLoadResult | null;
  /** The same from IndexedDB in Chromium (with --browser); absent in older reports, null when not run. */
  readonly cachedLoadBrowser?: CachedLoadResult | null;
  /** The persisted prompt-cache section (test/bench/prompt-cache.ts); absent in older reports, null when skipped. */
  readonly promptCache?: PromptCacheResult | null;
  /** Constrained decoding figures per backend (test/bench/structured-run.ts); absent in older reports. */
  readonly structured?: readonly {
    readonly backend: string;
    readonly ratio: number;
    readonly firstCompileMs: number;
    readonly nextCompileMs: number;
  }[];
  /** Batched choices per backend (test/bench/choices-run.ts); absent in older reports. */
  readonly choices?: readonly {
    readonly backend: string;
    /** Node (absent in older reports) or the bench page in Chromium (CPU = the renderer processes'). */
    readonly host?: 'node' | 'chromium';
    readonly n: number;
    readonly singleTokPerCpuS: number;
    readonly batchedTokPerCpuS: number;
    /** batched ÷ single aggregate decode tok/s (CPU time); null when a rate was too short to measure. */
    readonly ratio: number | null;
    readonly wallRatio: number | null;
  }[];
}

/** Median figures of one (runtime, threads) over its rounds. */
export interface SummaryRow {
  readonly runtime: RuntimeId;
  readonly host: 'node' | 'chromium';
  readonly backend: string;
  readonly threads: number;
  /** The KV cache of our runs (see RunResult.kv). */
  readonly kv?: { readonly type: string; readonly bytes: number };
  readonly rounds: number;
  readonly loadMs: number;
  readonly prefillTokPerS: Readonly<Record<string, number>>;
  readonly ttftMs: number;
  readonly decodeTokPerS: number;
  /** min–max of decode tok/s over rounds. */
  readonly decodeSpread: readonly [number, number];
  /** Decoded tokens per CPU-second (1000 ÷ median decodeCpuMsPerToken). */
  readonly decodeTokPerCpuS: number;
  /** Fraction of the bandwidth roofline at this thread count (null without a probe). */
  readonly roofline: number | null;
  /** Same from CPU time (1-thread rows only): bytes per token × tokens per CPU-second ÷ bandwidth; load-robust. */
  readonly rooflineCpuTime: number | null;
  readonly peakRssMiB: number;
  readonly breakdownMs: Readonly<Record<string, number>> | null;
  /** What the breakdown measures (GPU timestamps, encode time only, wall clock); null without a breakdown. */
  readonly breakdownSource?: string | null;
}

/** Median of a non-empty list. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Percentile (0–100) by nearest rank. */
export function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.round((p / 100) * (s.length - 1))))];
}

/** Deterministic prompt token ids in [lo, hi): the same for every runtime given the same seed (llama-cpp-run.mjs too). */
export function promptTokens(n: number, seed: number, lo: number, hi: number): Int32Array {
  return Int32Array.from(promptTokenIds(n, seed, lo, hi));
}

/** Rounds to `d` decimals. */
export function round(x: number, d = 2): number {
  const f = 10 ** d;
  return Math.round(x * f) / f;
}
