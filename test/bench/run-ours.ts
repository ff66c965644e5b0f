/**
 * Measures webgguf itself on one model, backend and thread count: parse + upload time, warm-up, prefill tok/s per
 * prompt length, TTFT, decode tok/s with per-step spread, a per-op breakdown of a few profiled decode steps, and
 * peak memory. Run in its own process by the orchestrator (`main` prints one RunResult JSON line), or in-process.
 */

import os from 'node:os';
import v8 from 'node:v8';
import type { KvType } from '../../src/backend/kv-type.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import type { RunResult, Workload } from './bench-types.js';
import { measureModel, wasmHeapBytes, type CreatedOps, type MeasureEnv } from './measure-model.js';

/** What to measure. */
export interface OursSpec {
  readonly modelPath: string;
  readonly backend: 'wasm' | 'webgpu' | 'cpu';
  readonly threads: number;
  readonly workload: Workload;
  /** KV cache type (default: the backend's own). */
  readonly kvType?: KvType;
  /** Force a WASM kernel build (default: the best supported). */
  readonly variant?: 'scalar' | 'simd128' | 'relaxed-simd';
  /** Decode steps timed op by op after the plain decode (default 8; 0 skips). */
  readonly profileSteps?: number;
  /** Re-run the first prompt op by op for a prefill breakdown (default true). */
  readonly profilePrefill?: boolean;
  /** WebGPU: breakdown from encode time even where GPU timestamps are offered. */
  readonly noGpuTimestamps?: boolean;
  /** WebGPU kernel set (default: as the adapter says). */
  readonly kernels?: 'auto' | 'hardware' | 'software';
}

/** Creates the backend named by the spec. */
async function createOps(spec: OursSpec, notes: string[]): Promise<CreatedOps> {
  if (spec.backend === 'wasm') {
    const { createWasmOps } = await import('../../src/backend/wasm/index.js');
    const ops = await createWasmOps({ threads: spec.threads, ...(spec.variant ? { variant: spec.variant } : {}) });
    if (!ops.description.includes(`×${spec.threads} thread`))
      notes.push(`asked for ${spec.threads} threads, got: ${ops.description}`);
    return { ops, runtime: 'webgguf-wasm', heapBytes: () => wasmHeapBytes(ops) };
  }
  if (spec.backend === 'webgpu') {
    const { createTimedWebGpuOps } = await import('./webgpu-timed-ops.js');
    const { nodeGpu } = await import('./node-gpu.js');
    return createTimedWebGpuOps(
      {
        gpu: await nodeGpu(),
        ...(spec.noGpuTimestamps ? { noTimestamps: true } : {}),
        ...(spec.kernels ? { kernels: spec.kernels } : {}),
      },
      notes,
    );
  }
  const { createCpuOps } = await import('../../src/backend/cpu/cpu-ops.js');
  return { ops: createCpuOps(), runtime: 'webgguf-cpu', heapBytes: () => null };
}

/** Node's view of itself: process CPU time (all threads), peak RSS, load average. */
export const NODE_ENV: MeasureEnv = {
  cpuMs: () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  },
  peakRssMiB: () => process.resourceUsage().maxRSS / 1024,
  loadAvg: () => os.loadavg()[0],
  notes: [],
};

/** Measures webgguf in this Node process. */
export function measureOurs(spec: OursSpec, signal?: AbortSignal): Promise<RunResult> {
  return measureModel({
    modelName: spec.modelPath,
    openSource: () => NodeFileSource.open(spec.modelPath, signal),
    createOps: (notes) => createOps(spec, notes),
    threads: spec.threads,
    workload: spec.workload,
    ...(spec.kvType ? { kvType: spec.kvType } : {}),
    ...(spec.profileSteps !== undefined ? { profileSteps: spec.profileSteps } : {}),
    ...(spec.profilePrefill !== undefined ? { profilePrefill: spec.profilePrefill } : {}),
    env: NODE_ENV,
    ...(signal ? { signal } : {}),
  });
}

/** Child-process entry: `run-ours.ts '<OursSpec JSON>'`; prints the RunResult as the last stdout line. */
export async function main(args: string[]): Promise<number> {
  v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
  const spec = JSON.parse(args[0] ?? '{}') as OursSpec;
  const result = await measureOurs(spec);
  process.stdout.write(`\n${JSON.stringify(result)}\n`);
  return 0;
}
