/**
 * The measurement itself, free of Node APIs so the same code runs in Node (run-ours.ts) and in the browser page
 * (browser/page-entry.ts): load (parse, upload), warm-up, prefill tok/s per prompt length, TTFT, decode tok/s with
 * per-step spread and CPU time, and a per-op breakdown of a few profiled decode steps.
 */

import { defaultKvType } from '../../src/api/default-kv-type.js';
import type { KvType } from '../../src/backend/kv-type.js';
import type { Ops } from '../../src/backend/ops.js';
import { parseGguf } from '../../src/gguf/parse.js';
import type { ByteSource } from '../../src/io/byte-source.js';
import { loadTransformer } from '../../src/model/load.js';
import {
  median,
  percentile,
  promptTokens,
  round,
  type RunResult,
  type RuntimeId,
  type Workload,
} from './bench-types.js';
import type { GpuTimer } from './gpu-timer.js';
import { greedyDecode } from './greedy-decode-loop.js';
import { breakdownPerToken, gpuBreakdownPerToken, profileOps } from './op-profiler.js';

/** What the host environment can tell about itself. */
export interface MeasureEnv {
  /** CPU time of this process so far, ms (wall time where unknown — say so in `notes`). */
  cpuMs(): number;
  /** Peak resident memory so far, MiB (NaN where unknown). */
  peakRssMiB(): number;
  /** 1-minute load average (NaN where unknown). */
  loadAvg(): number;
  readonly notes: readonly string[];
}

/** A created backend. */
export interface CreatedOps {
  readonly ops: Ops;
  readonly runtime: RuntimeId;
  /** Bytes of backend memory (the WASM heap), or null. */
  readonly heapBytes: () => number | null;
  /** WebGPU: GPU timestamps for the profiled steps (null/absent: the breakdown is encode time only). */
  readonly gpuTimer?: GpuTimer | null;
  /** Why there is no GPU timer (shown in the breakdown's source). */
  readonly gpuTimerNote?: string;
  /** Releases what the backend does not own (a device created for the timer), after the model is destroyed. */
  readonly dispose?: () => void;
}

/** Input of `measureModel`. */
export interface MeasureInput {
  readonly modelName: string;
  readonly openSource: () => Promise<ByteSource>;
  readonly createOps: (notes: string[]) => Promise<CreatedOps>;
  readonly threads: number;
  readonly workload: Workload;
  /** KV cache type (default: the backend's own). */
  readonly kvType?: KvType;
  /** Decode steps timed op by op after the plain decode (default 8; 0 skips). */
  readonly profileSteps?: number;
  /**
   * Also re-run the first prompt op by op for a prefill breakdown (default true when profileSteps > 0). False saves a
   * whole prefill where prefill is slow (WebGPU on SwiftShader) — with one prompt length, nothing is re-run.
   */
  readonly profilePrefill?: boolean;
  readonly env: MeasureEnv;
  readonly signal?: AbortSignal;
}

/** Size of the WASM backend's memory, read structurally (WasmOps keeps its heap private). */
export function wasmHeapBytes(ops: Ops): number | null {
  const heap = (ops as unknown as { heap?: { memory?: WebAssembly.Memory } }).heap;
  return heap?.memory instanceof WebAssembly.Memory ? heap.memory.buffer.byteLength : null;
}

/**
 * Measures one model on one backend: parse, upload, warm-up, prefill per prompt length (each from position 0), TTFT,
 * `decodeTokens` greedy decode steps after the first prompt, then `profileSteps` steps timed op by op.
 */
export async function measureModel(m: MeasureInput): Promise<RunResult> {
  const { env, signal } = m;
  const load0 = env.loadAvg();
  const notes: string[] = [];
  const { promptLengths, decodeTokens, seed } = m.workload;
  const maxPrompt = Math.max(...promptLengths);
  const tStart = performance.now();
  const source = await m.openSource();
  try {
    const gguf = await parseGguf(source, signal ? { signal } : {});
    const tParsed = performance.now();
    const created = await m.createOps(notes);
    const timer = created.gpuTimer ?? null;
    let timerFailure: string | null = null;
    let kernelMs: Record<string, number> | null = null; // GPU ms per token by pipeline label, of the last profiled run
    const { ops, profile } = profileOps(created.ops, timer);
    /** Runs `work` profiled op by op (GPU time when there is a timer); returns the per-step breakdown. */
    const profiled = async (steps: number, work: () => Promise<void>): Promise<Record<string, number>> => {
      profile.reset();
      profile.enabled = true;
      timer?.reset();
      if (timer && timerFailure === null) timer.enabled = true;
      const p0 = performance.now();
      try {
        await work();
      } finally {
        profile.enabled = false;
        if (timer) timer.enabled = false;
      }
      const wall = performance.now() - p0;
      if (timer && timerFailure === null) {
        try {
          const t = await timer.collect();
          kernelMs = Object.fromEntries(
            [...t.byKernel].sort((x, y) => y[1] - x[1]).map(([k, v]) => [k, round(v / steps, 3)]),
          );
          return gpuBreakdownPerToken(t.byKind, t.spanMs, steps, wall);
        } catch (e) {
          // Never fail a run for its breakdown: fall back to encode time and say why.
          timerFailure = (e as Error).message;
          notes.push(`GPU timer failed, breakdown is encode time: ${timerFailure}`);
        }
      }
      return breakdownPerToken(profile, steps, wall);
    };
    const contextLength = maxPrompt + decodeTokens + 16;
    const tUp0 = performance.now();
    const model = await loadTransformer(gguf, source, ops, {
      contextLength,
      ubatchSize: Math.min(512, maxPrompt),
      // Without --kv-type, what an engine gets by default (f16 on wasm for decoders: src/api/default-kv-type.ts).
      kvType: m.kvType ?? defaultKvType(ops.name, gguf),
      ...(signal ? { signal } : {}),
    });
    const tLoaded = performance.now();
    try {
      const [lo, hi] = m.workload.tokenRange;
      // Warm-up: a short prompt and a few steps (compiles kernels / pipelines, touches every weight once).
      const w0 = performance.now();
      await model.eval(promptTokens(8, seed + 99, lo, hi), 0, 0);
      let tok = await model.argmax();
      for (let i = 0; i < 3; i++) {
        await model.eval(Int32Array.of(tok), 8 + i, 0);
        tok = await model.argmax();
      }
      const warmupMs = performance.now() - w0;

      // Prefill per prompt length, each from position 0 (overwrites the KV); TTFT of the first length.
      const prefill: Record<string, number> = {};
      let ttftMs = 0;
      let firstTok = 0;
      for (const [i, n] of promptLengths.entries()) {
        const ids = promptTokens(n, seed, lo, hi);
        const t0 = performance.now();
        await model.eval(ids, 0, 0);
        const t = await model.argmax();
        const dt = performance.now() - t0;
        prefill[String(n)] = round(n / (dt / 1000), 2);
        if (i === 0) {
          ttftMs = round(dt, 1);
          firstTok = t;
        }
      }
      // Decode after the first prompt, re-prefilled so the KV holds it; that re-run is timed op by op (not in rates).
      const n0 = promptLengths[0];
      let prefillBreakdownMs: Record<string, number> | null = null;
      const wantPrefillProfile = (m.profileSteps ?? 8) > 0 && (m.profilePrefill ?? true);
      if (promptLengths.length > 1 || wantPrefillProfile) {
        const rerun = async (): Promise<void> => {
          await model.eval(promptTokens(n0, seed, lo, hi), 0, 0);
          firstTok = await model.argmax();
        };
        if (wantPrefillProfile) prefillBreakdownMs = await profiled(1, rerun);
        else await rerun();
      }
      const d0 = performance.now();
      const c0 = env.cpuMs();
      const { steps, last } = await greedyDecode(model, firstTok, n0, decodeTokens); // pipelined where it can chain
      tok = last;
      const decodeMs = performance.now() - d0;
      const cpuMs = env.cpuMs() - c0;

      // A few more steps, timed op by op.
      const nProf = Math.min(m.profileSteps ?? 8, contextLength - n0 - decodeTokens - 1);
      let breakdownMs: Record<string, number> | null = null;
      kernelMs = null;
      if (nProf > 0) {
        breakdownMs = await profiled(nProf, async () => {
          for (let i = 0; i < nProf; i++) {
            await model.eval(Int32Array.of(tok), n0 + decodeTokens + i, 0);
            tok = await model.argmax();
          }
        });
      }
      const heap = created.heapBytes();
      return {
        runtime: created.runtime,
        backend: m.kvType ? `${created.ops.description}, KV ${model.kvCache.type}` : created.ops.description,
        kv: { type: model.kvCache.type, bytes: model.kvCache.bytes },
        threads: m.threads,
        model: m.modelName,
        loadMs: {
          parse: round(tParsed - tStart, 1),
          upload: round(tLoaded - tUp0, 1),
          total: round(tLoaded - tStart, 1),
        },
        warmupMs: round(warmupMs, 1),
        prefillTokPerS: prefill,
        ttftMs,
        decodeTokPerS: round(decodeTokens / (decodeMs / 1000), 3),
        decodeCpuMsPerToken: round(cpuMs / decodeTokens, 2),
        decodeStepMs: {
          median: round(median(steps), 2),
          p10: round(percentile(steps, 10), 2),
          p90: round(percentile(steps, 90), 2),
        },
        breakdownMs,
        prefillBreakdownMs,
        breakdownSource: breakdownSource(created, timerFailure),
        ...(kernelMs ? { breakdownByKernelMs: kernelMs } : {}),
        memoryMiB: { peakRss: round(env.peakRssMiB(), 1), backend: heap === null ? null : round(heap / 2 ** 20, 1) },
        loadAvg: [round(load0), round(env.loadAvg())],
        notes: [...notes, ...env.notes],
      };
    } finally {
      model.destroy();
      created.dispose?.();
    }
  } finally {
    await source.close?.();
  }
}

/** What the breakdown measures, for the report. */
function breakdownSource(created: CreatedOps, timerFailure: string | null): string {
  if (created.runtime !== 'webgguf-webgpu') return 'wall-clock per op';
  if (timerFailure !== null) return `encode time only (GPU timer failed: ${timerFailure})`;
  if (created.gpuTimer) return 'GPU time per op (timestamp-query; one timed pass per dispatch while profiling)';
  return `encode time only (no GPU timestamps: ${created.gpuTimerNote ?? 'no timer'})`;
}
