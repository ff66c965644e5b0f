/**
 * Measures webgguf itself on one model, backend and thread count: parse + upload time, warm-up, prefill tok/s per
 * prompt length, TTFT, decode tok/s with per-step spread, a per-op breakdown of a few profiled decode steps, and
 * peak memory. Run in its own process by the orchestrator (`main` prints one RunResult JSON line), or in-process.
 */

import os from 'node:os';
import v8 from 'node:v8';
import type { Ops } from '../../src/backend/ops.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import { loadTransformer } from '../../src/model/load.js';
import { median, percentile, promptTokens, round, type RunResult, type RuntimeId, type Workload } from './bench-types.js';
import { breakdownPerToken, profileOps } from './op-profiler.js';

/** What to measure. */
export interface OursSpec {
  readonly modelPath: string;
  readonly backend: 'wasm' | 'webgpu' | 'cpu';
  readonly threads: number;
  readonly workload: Workload;
  /** Force a WASM kernel build (default: the best supported). */
  readonly variant?: 'scalar' | 'simd128' | 'relaxed-simd';
  /** Decode steps timed op by op after the plain decode (default 8; 0 skips). */
  readonly profileSteps?: number;
}

/** Creates the backend named by the spec. */
async function createOps(spec: OursSpec, notes: string[]): Promise<{ ops: Ops; runtime: RuntimeId; heapBytes: () => number | null }> {
  if (spec.backend === 'wasm') {
    const { createWasmOps } = await import('../../src/backend/wasm/index.js');
    const ops = await createWasmOps({ threads: spec.threads, ...(spec.variant ? { variant: spec.variant } : {}) });
    if (!ops.description.includes(`×${spec.threads} thread`)) notes.push(`asked for ${spec.threads} threads, got: ${ops.description}`);
    return { ops, runtime: 'webgguf-wasm', heapBytes: () => wasmHeapBytes(ops) };
  }
  if (spec.backend === 'webgpu') {
    const { createWebGpuOps } = await import('../../src/backend/webgpu/index.js');
    const { nodeGpu } = await import('./node-gpu.js');
    const ops = await createWebGpuOps({ gpu: await nodeGpu() });
    return { ops, runtime: 'webgguf-webgpu', heapBytes: () => null };
  }
  const { createCpuOps } = await import('../../src/backend/cpu/cpu-ops.js');
  return { ops: createCpuOps(), runtime: 'webgguf-cpu', heapBytes: () => null };
}

/** Size of the WASM backend's memory, read structurally (WasmOps keeps its heap private). */
function wasmHeapBytes(ops: Ops): number | null {
  const heap = (ops as unknown as { heap?: { memory?: WebAssembly.Memory } }).heap;
  return heap?.memory instanceof WebAssembly.Memory ? heap.memory.buffer.byteLength : null;
}

/** Runs the whole measurement. */
export async function measureOurs(spec: OursSpec, signal?: AbortSignal): Promise<RunResult> {
  const load0 = os.loadavg()[0];
  const notes: string[] = [];
  const { promptLengths, decodeTokens, seed } = spec.workload;
  const maxPrompt = Math.max(...promptLengths);
  const tStart = performance.now();
  const source = await NodeFileSource.open(spec.modelPath, signal);
  try {
    const gguf = await parseGguf(source, signal ? { signal } : {});
    const tParsed = performance.now();
    const created = await createOps(spec, notes);
    const { ops, profile } = profileOps(created.ops);
    const contextLength = maxPrompt + decodeTokens + 16;
    const tUp0 = performance.now();
    const model = await loadTransformer(gguf, source, ops, { contextLength, ubatchSize: Math.min(512, maxPrompt), ...(signal ? { signal } : {}) });
    const tLoaded = performance.now();
    try {
      const [lo, hi] = spec.workload.tokenRange;
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
      // Decode after the first prompt (re-prefilled so the KV holds it; the timing of that re-run is not used).
      const n0 = promptLengths[0];
      if (promptLengths.length > 1) {
        await model.eval(promptTokens(n0, seed, lo, hi), 0, 0);
        firstTok = await model.argmax();
      }
      const steps: number[] = [];
      tok = firstTok;
      const d0 = performance.now();
      const c0 = process.cpuUsage();
      for (let i = 0; i < decodeTokens; i++) {
        const s0 = performance.now();
        await model.eval(Int32Array.of(tok), n0 + i, 0);
        tok = await model.argmax();
        steps.push(performance.now() - s0);
      }
      const decodeMs = performance.now() - d0;
      const cpu = process.cpuUsage(c0);

      // A few more steps, timed op by op.
      const nProf = Math.min(spec.profileSteps ?? 8, contextLength - n0 - decodeTokens - 1);
      let breakdownMs: Record<string, number> | null = null;
      if (nProf > 0) {
        profile.reset();
        profile.enabled = true;
        const p0 = performance.now();
        for (let i = 0; i < nProf; i++) {
          await model.eval(Int32Array.of(tok), n0 + decodeTokens + i, 0);
          tok = await model.argmax();
        }
        profile.enabled = false;
        breakdownMs = breakdownPerToken(profile, nProf, performance.now() - p0);
      }
      const heap = created.heapBytes();
      return {
        runtime: created.runtime,
        backend: created.ops.description,
        threads: spec.threads,
        model: spec.modelPath,
        loadMs: { parse: round(tParsed - tStart, 1), upload: round(tLoaded - tUp0, 1), total: round(tLoaded - tStart, 1) },
        warmupMs: round(warmupMs, 1),
        prefillTokPerS: prefill,
        ttftMs,
        decodeTokPerS: round(decodeTokens / (decodeMs / 1000), 3),
        decodeCpuMsPerToken: round((cpu.user + cpu.system) / 1000 / decodeTokens, 2),
        decodeStepMs: { median: round(median(steps), 2), p10: round(percentile(steps, 10), 2), p90: round(percentile(steps, 90), 2) },
        breakdownMs,
        breakdownSource: spec.backend === 'webgpu' ? 'encode time per op (not GPU time)' : 'wall-clock per op',
        memoryMiB: { peakRss: round(process.resourceUsage().maxRSS / 1024, 1), backend: heap === null ? null : round(heap / 2 ** 20, 1) },
        loadAvg: [round(load0), round(os.loadavg()[0])],
        notes,
      };
    } finally {
      model.destroy();
    }
  } finally {
    await source.close();
  }
}

/** Child-process entry: `run-ours.ts '<OursSpec JSON>'`; prints the RunResult as the last stdout line. */
export async function main(args: string[]): Promise<number> {
  v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
  const spec = JSON.parse(args[0] ?? '{}') as OursSpec;
  const result = await measureOurs(spec);
  process.stdout.write(`\n${JSON.stringify(result)}\n`);
  return 0;
}
