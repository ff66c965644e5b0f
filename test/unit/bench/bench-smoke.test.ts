/**
 * Smoke test of the benchmark harness (test/bench): measures webgguf's WASM backend on the tiny stories260K model
 * with a 3-token prompt and 2 decoded tokens, probes bandwidth on 1 MiB, and checks the shapes of the RunResult, the
 * summary, the ratios and the Markdown/SVG renderings. Never asserts on speed.
 */

import { describe, expect, it } from 'vitest';
import { probeBandwidth } from '../../bench/bandwidth-probe.js';
import { parseBenchArgs } from '../../bench/bench-args.js';
import { computeRatios, summarize, toMarkdown, toSvg } from '../../bench/bench-report.js';
import { promptTokens, type BenchReport, type RunResult } from '../../bench/bench-types.js';
import { measureChoices } from '../../bench/choices-run.js';
import { measureOurs } from '../../bench/run-ours.js';
import { sharedPath } from '../../helpers/shared-path.js';

const MODEL = sharedPath('models', 'stories260K.gguf');
const WORKLOAD = { promptLengths: [3], decodeTokens: 2, seed: 1, tokenRange: [10, 500] as const };

function expectRunShape(r: RunResult): void {
  expect(r.runtime).toBe('webgguf-wasm');
  expect(r.threads).toBe(1);
  for (const v of [
    r.loadMs.parse,
    r.loadMs.upload,
    r.loadMs.total,
    r.warmupMs,
    r.ttftMs,
    r.decodeTokPerS,
    r.decodeCpuMsPerToken,
  ]) {
    expect(Number.isFinite(v) && v >= 0).toBe(true);
  }
  expect(Object.keys(r.prefillTokPerS)).toEqual(['3']);
  expect(r.prefillTokPerS['3']).toBeGreaterThan(0);
  expect(r.decodeStepMs.p10).toBeLessThanOrEqual(r.decodeStepMs.p90);
  expect(r.breakdownMs).not.toBeNull();
  expect(Object.keys(r.breakdownMs ?? {})).toEqual(expect.arrayContaining(['matmul ffn', 'js/other']));
  expect(Object.keys(r.prefillBreakdownMs ?? {})).toEqual(expect.arrayContaining(['matmul ffn', 'js/other']));
  expect(r.memoryMiB.peakRss).toBeGreaterThan(0);
  expect(r.memoryMiB.backend).toBeGreaterThan(0);
  expect(r.loadAvg).toHaveLength(2);
}

describe('bench harness (smoke)', () => {
  it('measures the WASM backend and renders a report', async () => {
    const run = await measureOurs({
      modelPath: MODEL,
      backend: 'wasm',
      threads: 1,
      workload: WORKLOAD,
      profileSteps: 2,
    });
    expectRunShape(run);
    expect(JSON.parse(JSON.stringify(run))).toEqual(run);

    const peer: RunResult = {
      ...run,
      runtime: 'llama.cpp-cpu',
      backend: 'peer',
      breakdownMs: null,
      decodeTokPerS: run.decodeTokPerS * 2,
    };
    const bandwidth = await probeBandwidth({ bytes: 2 ** 20, threads: [1], repeats: 1, passes: 1 });
    expect(bandwidth.gbPerS['1']).toBeGreaterThan(0);
    const summary = summarize([run, peer], 1e6, bandwidth);
    expect(summary.map((s) => s.runtime)).toEqual(['webgguf-wasm', 'llama.cpp-cpu']);
    expect(summary[0].roofline).toBeGreaterThan(0);
    const ratios = computeRatios(summary);
    const decode = ratios.find((q) => q.metric === 'decode');
    expect(decode?.ratio).toBeCloseTo(0.5, 2);
    expect(decode?.target).toBe(0.8);

    const report: BenchReport = {
      version: 1,
      startedAt: '2026-01-01T00:00:00',
      command: 'npm run bench -- --quick',
      machine: { cpus: 2, cpuModel: 'x', node: process.versions.node, totalMemGiB: 1 },
      model: { path: MODEL, shape: 'tiny', quant: 'q4_0', bytes: 1e6, bytesPerToken: 1e6 },
      workload: WORKLOAD,
      bandwidth,
      gpuBandwidthGbPerS: null,
      runs: [run, peer],
      summary,
      ratios,
      errors: ['vulkan: skipped'],
      choices: [await measureChoices({ modelPath: MODEL, backend: 'wasm', threads: 1, decode: 4, n: 2, repeats: 1 })],
    };
    const c = report.choices![0]!;
    // Rates come from a difference of two timed runs: on a 260K model a few tokens can fall under the timer's
    // resolution, so a rate may be 0 and its ratio null (what the report then prints); never negative or NaN.
    for (const v of [c.singleTokPerCpuS, c.batchedTokPerCpuS]) {
      expect(Number.isFinite(v) && v >= 0).toBe(true);
    }
    for (const r of [c.ratio, c.wallRatio]) expect(r === null || (Number.isFinite(r) && r > 0)).toBe(true);
    expect(c.n).toBe(2);
    const md = toMarkdown(report);
    expect(md).toContain('Batched choices (node, wasm');
    expect(md).toContain('| webgguf-wasm |');
    expect(md).toContain('webgguf-wasm ÷ llama.cpp-cpu');
    expect(md).toContain('vulkan: skipped');
    const svg = toSvg(report);
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg.match(/<rect /g)).toHaveLength(2);
  }, 60_000);

  it('parses options and rejects bad ones', () => {
    const a = parseBenchArgs(['--quick', '--threads', '1', '--peers', 'none']);
    expect(a.prompts).toEqual([32]);
    expect(a.threads).toEqual([1]);
    expect(a.peers).toEqual([]);
    expect(a.browserChoices).toBe(false);
    expect(parseBenchArgs(['--browser-choices']).browserChoices).toBe(true);
    expect(() => parseBenchArgs(['--threads', '0'])).toThrow(/--threads got "0"/);
    expect(() => parseBenchArgs(['--shape', 'huge'])).toThrow(/qwen2.5-0.5b/);
  });

  it('draws the same prompt ids every time (pinned: the peers draw them from the same stream)', () => {
    expect([...promptTokens(4, 1, 10, 500)]).toEqual([139, 146, 255, 81]);
    expect([...promptTokens(4, 2, 10, 500)]).toEqual([237, 292, 432, 394]);
    expect(promptTokens(100, 2, 10, 500).every((t) => t >= 10 && t < 500)).toBe(true);
  });
});
