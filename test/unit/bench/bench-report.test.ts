/**
 * The benchmark report's peer rows and breakdown labels, from hand-made runs: our WebGPU in Chromium is compared with
 * wllama at each thread count wllama ran at, WASM keeps its issue-8 targets, and each breakdown says what it measures
 * (GPU timestamps vs encode time only). Also the per-token GPU breakdown arithmetic of op-profiler.ts.
 */

import { describe, expect, it } from 'vitest';
import { parseBenchArgs } from '../../bench/bench-args.js';
import { computeRatios, summarize, toMarkdown } from '../../bench/bench-report.js';
import type { BenchReport, RunResult, RuntimeId } from '../../bench/bench-types.js';
import { gpuBreakdownPerToken } from '../../bench/op-profiler.js';

const WORKLOAD = { promptLengths: [128], decodeTokens: 32, seed: 1, tokenRange: [100, 30000] as const };
const GPU_SOURCE = 'GPU time per op (timestamp-query; one timed pass per dispatch while profiling)';

function run(runtime: RuntimeId, threads: number, decode: number, extra: Partial<RunResult> = {}): RunResult {
  return {
    runtime,
    host: 'chromium',
    backend: runtime,
    threads,
    model: 'm.gguf',
    loadMs: { parse: 1, upload: 2, total: 3 },
    warmupMs: 1,
    prefillTokPerS: { '128': decode * 2 },
    ttftMs: 10,
    decodeTokPerS: decode,
    decodeCpuMsPerToken: 1000 / decode,
    decodeStepMs: { median: 1, p10: 1, p90: 1 },
    breakdownMs: null,
    breakdownSource: 'n/a (peer)',
    memoryMiB: { peakRss: 1, backend: null },
    loadAvg: [1, 1],
    notes: [],
    ...extra,
  };
}

describe('bench report', () => {
  const runs = [
    run('webgguf-wasm', 1, 15, {
      breakdownMs: { 'matmul ffn': 30, 'js/other': 2 },
      breakdownSource: 'wall-clock per op',
    }),
    run('wllama', 1, 2),
    run('webgguf-wasm', 2, 25, {
      breakdownMs: { 'matmul ffn': 20, 'js/other': 2 },
      breakdownSource: 'wall-clock per op',
    }),
    run('wllama', 2, 4),
    run('webgguf-webgpu', 1, 0.5, {
      breakdownMs: { 'matmul ffn': 1500, 'host/wait (GPU idle)': 100 },
      breakdownSource: GPU_SOURCE,
      breakdownByKernelMs: { 'gemv.q4_0.f32.wg64': 1400 },
    }),
  ];
  const summary = summarize(runs, 330 * 2 ** 20, null);
  const ratios = computeRatios(summary);

  it('compares our WebGPU in Chromium with wllama at every thread count', () => {
    const gpu = ratios.filter((q) => q.ours === 'webgguf-webgpu' && q.peer === 'wllama' && q.metric === 'decode');
    expect(gpu.map((q) => [q.threads, q.ratio, q.target])).toEqual([
      [1, 0.25, null],
      [2, 0.125, null],
    ]);
    const wasm = ratios.filter((q) => q.ours === 'webgguf-wasm' && q.metric === 'decode');
    expect(wasm.map((q) => [q.threads, q.ratio, q.target])).toEqual([
      [1, 7.5, 1.2],
      [2, 6.25, 1.2],
    ]);
  });

  it('compares our WASM in Chromium with native llama.cpp too (decode and prefill, no CPU-time ratio)', () => {
    const rows = summarize(
      [
        run('webgguf-wasm', 1, 40),
        run('llama.cpp-cpu', 1, 50, { host: 'node' }),
        run('webgguf-wasm', 1, 30, { host: 'node' }),
      ],
      330 * 2 ** 20,
      null,
    );
    const vsNative = computeRatios(rows).filter((q) => q.peer === 'llama.cpp-cpu');
    expect(vsNative.map((q) => [q.oursHost ?? 'node', q.metric, q.ratio])).toEqual([
      ['chromium', 'decode', 0.8],
      ['chromium', 'prefill128', 0.8],
      ['node', 'decode', 0.6],
      ['node', 'decode-cpu-time', 0.6],
      ['node', 'prefill128', 0.6],
    ]);
    const md = toMarkdown({
      version: 1,
      startedAt: '2026-01-01T00:00:00',
      command: 'npm run bench -- --browser',
      machine: { cpus: 2, cpuModel: 'x', node: process.versions.node, totalMemGiB: 1 },
      model: { path: 'm.gguf', shape: 'qwen2.5-0.5b', quant: 'q8_0', bytes: 1, bytesPerToken: 1 },
      workload: WORKLOAD,
      bandwidth: null,
      gpuBandwidthGbPerS: null,
      runs: [],
      summary: rows,
      ratios: vsNative,
      errors: [],
    });
    expect(md).toContain('| webgguf-wasm (chromium) ÷ llama.cpp-cpu | prefill128 | 1 | 0.8× | – |');
  });

  it('renders the ratio rows and what each breakdown measures', () => {
    const report: BenchReport = {
      version: 1,
      startedAt: '2026-01-01T00:00:00',
      command: 'npm run bench -- --browser-webgpu',
      machine: { cpus: 2, cpuModel: 'x', node: process.versions.node, totalMemGiB: 1 },
      model: { path: 'm.gguf', shape: 'qwen2.5-0.5b', quant: 'q4_0', bytes: 1, bytesPerToken: 1 },
      workload: WORKLOAD,
      bandwidth: null,
      gpuBandwidthGbPerS: null,
      runs,
      summary,
      ratios,
      errors: [],
    };
    const md = toMarkdown(report);
    expect(md).toContain('| webgguf-webgpu ÷ wllama (chromium) | decode | 2 | 0.125× | – |');
    expect(md).toContain(`webgguf-webgpu (chromium) ×1 [${GPU_SOURCE}]: matmul ffn 1500`);
    expect(md).toContain('webgguf-wasm (chromium) ×1 [wall-clock per op]');
    expect(md).toContain('  - by kernel (GPU ms per token, last round): gemv.q4_0.f32.wg64 1400');
  });

  it('splits a GPU-timed step into op kinds, gaps between passes and host time', () => {
    const byKind = new Map([
      ['matmul ffn', 60],
      ['attention', 20],
    ]);
    // 4 steps: 80 ms busy, 90 ms from first to last pass, 200 ms of wall time.
    expect(gpuBreakdownPerToken(byKind, 90, 4, 200)).toEqual({
      'matmul ffn': 15,
      attention: 5,
      'gpu gaps': 2.5,
      'host/wait (GPU idle)': 27.5,
    });
  });

  it('--kv-type runs every listed KV type as its own row and reports same-run ratios to the first', () => {
    expect(parseBenchArgs(['--kv-type', 'f16,q8_0']).kvTypes).toEqual(['f16', 'q8_0']);
    expect(parseBenchArgs([]).kvTypes).toEqual([]);
    expect(() => parseBenchArgs(['--kv-type', 'q5_0'])).toThrow(/--kv-type got "q5_0"/);
    const kvRuns = [
      run('webgguf-wasm', 1, 20, { host: 'node', kv: { type: 'f16', bytes: 1000 } }),
      run('webgguf-wasm', 1, 19, { host: 'node', kv: { type: 'q8_0', bytes: 531.25 } }),
      run('webgguf-wasm', 1, 21, { host: 'node', kv: { type: 'f16', bytes: 1000 } }),
      run('webgguf-wasm', 1, 20, { host: 'node', kv: { type: 'q8_0', bytes: 531.25 } }),
    ];
    const rows = summarize(kvRuns, 1, null);
    expect(rows.map((r) => [r.kv?.type, r.rounds, r.decodeTokPerS])).toEqual([
      ['f16', 2, 20.5],
      ['q8_0', 2, 19.5],
    ]);
    const md = toMarkdown({
      version: 1,
      startedAt: '2026-01-01T00:00:00',
      command: 'npm run bench -- --kv-type f16,q8_0',
      machine: { cpus: 2, cpuModel: 'x', node: process.versions.node, totalMemGiB: 1 },
      model: { path: 'm.gguf', shape: 'qwen2.5-0.5b', quant: 'q4_0', bytes: 1, bytesPerToken: 1 },
      workload: WORKLOAD,
      bandwidth: null,
      gpuBandwidthGbPerS: null,
      runs: kvRuns,
      summary: rows,
      ratios: [],
      errors: [],
    });
    expect(md).toContain('| q8_0 ÷ f16 | webgguf-wasm (node) | 1 | 0.951× | 0.951× | 0.531× |');
  });
});
