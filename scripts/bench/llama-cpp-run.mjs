#!/usr/bin/env node
// Peer runner for the benchmark harness: llama.cpp through node-llama-cpp (installed in ../oracle, nothing built or
// downloaded), CPU or Vulkan, on the same GGUF, token ids and thread count as webgguf. Times the same steps as
// test/bench/run-ours.ts with its own timers and prints one RunResult JSON as the last stdout line.
// Usage: node scripts/bench/llama-cpp-run.mjs '<spec JSON>'   spec: {modelPath, threads, workload, gpu?: 'vulkan'|'cuda'}

import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promptTokenIds as promptTokens } from '../deterministic-random.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const oracle = path.resolve(here, '..', 'oracle', 'node_modules', 'node-llama-cpp', 'dist', 'index.js');

const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const sorted = (xs) => [...xs].sort((a, b) => a - b);
const median = (xs) => {
  const s = sorted(xs);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const pct = (xs, p) => {
  const s = sorted(xs);
  return s[Math.min(s.length - 1, Math.round((p / 100) * (s.length - 1)))];
};

/** Evaluates `ids` from an empty sequence and returns [ms, first sampled token] (greedy). */
async function prefill(seq, ids) {
  await seq.clearHistory();
  const last = ids.length - 1;
  const t0 = performance.now();
  const outs = await seq.controlledEvaluate(
    ids.map((t, i) => (i === last ? [t, { generateNext: { token: true } }] : t)),
  );
  const dt = performance.now() - t0;
  return [dt, outs[last].next.token];
}

async function run(spec) {
  const load0 = os.loadavg()[0];
  const notes = [];
  const { getLlama, LlamaLogLevel } = await import(pathToFileURL(oracle).href);
  const gpu = spec.gpu === 'vulkan' || spec.gpu === 'cuda' ? spec.gpu : false;
  const tLib = performance.now();
  const llama = await getLlama({ gpu, build: 'never', logLevel: LlamaLogLevel.error });
  const t0 = performance.now();
  notes.push(`getLlama ${round(t0 - tLib, 0)} ms (not counted in load)`);
  const model = await llama.loadModel({ modelPath: path.resolve(spec.modelPath), gpuLayers: gpu ? 'max' : 0 });
  const tModel = performance.now();
  const { promptLengths, decodeTokens, seed } = spec.workload;
  const maxPrompt = Math.max(...promptLengths);
  const context = await model.createContext({
    contextSize: maxPrompt + decodeTokens + 32,
    batchSize: Math.min(512, maxPrompt),
    threads: spec.threads,
    flashAttention: false,
  });
  const tCtx = performance.now();
  const seq = context.getSequence();
  const [lo, hi] = spec.workload.tokenRange;
  try {
    const w0 = performance.now();
    let [, tok] = await prefill(seq, promptTokens(8, seed + 99, lo, hi));
    for (let i = 0; i < 3; i++)
      [
        {
          next: { token: tok },
        },
      ] = await seq.controlledEvaluate([[tok, { generateNext: { token: true } }]]);
    const warmupMs = performance.now() - w0;

    const prefillTokPerS = {};
    let ttftMs = 0;
    for (const [i, n] of promptLengths.entries()) {
      const [dt, t] = await prefill(seq, promptTokens(n, seed, lo, hi));
      prefillTokPerS[String(n)] = round(n / (dt / 1000));
      if (i === 0) {
        ttftMs = round(dt, 1);
        tok = t;
      }
    }
    if (promptLengths.length > 1) [, tok] = await prefill(seq, promptTokens(promptLengths[0], seed, lo, hi));
    const steps = [];
    const d0 = performance.now();
    const c0 = process.cpuUsage();
    for (let i = 0; i < decodeTokens; i++) {
      const s0 = performance.now();
      [
        {
          next: { token: tok },
        },
      ] = await seq.controlledEvaluate([[tok, { generateNext: { token: true } }]]);
      steps.push(performance.now() - s0);
    }
    const decodeMs = performance.now() - d0;
    const cpu = process.cpuUsage(c0);
    notes.push('KV cache F16 (llama.cpp default), flash attention off');
    return {
      runtime: gpu ? `llama.cpp-${gpu}` : 'llama.cpp-cpu',
      backend:
        `llama.cpp (node-llama-cpp ${llama.buildType ?? ''} ${gpu ? `${gpu} ${llama.gpu ?? ''}` : 'CPU'})`.replace(
          /\s+/g,
          ' ',
        ),
      threads: spec.threads,
      model: spec.modelPath,
      loadMs: { parse: 0, upload: round(tModel - t0, 1), total: round(tCtx - t0, 1) },
      warmupMs: round(warmupMs, 1),
      prefillTokPerS,
      ttftMs,
      decodeTokPerS: round(decodeTokens / (decodeMs / 1000), 3),
      decodeCpuMsPerToken: round((cpu.user + cpu.system) / 1000 / decodeTokens),
      decodeStepMs: { median: round(median(steps)), p10: round(pct(steps, 10)), p90: round(pct(steps, 90)) },
      breakdownMs: null,
      breakdownSource: 'n/a (peer)',
      memoryMiB: { peakRss: round(process.resourceUsage().maxRSS / 1024, 1), backend: null },
      loadAvg: [round(load0), round(os.loadavg()[0])],
      notes,
    };
  } finally {
    await context.dispose();
    await model.dispose();
    await llama.dispose();
  }
}

const spec = JSON.parse(process.argv[2] ?? '{}');
if (!spec.modelPath || !spec.workload) {
  console.error('usage: node scripts/bench/llama-cpp-run.mjs \'{"modelPath":…,"threads":1,"workload":{…}}\'');
  process.exit(2);
}
const result = await run(spec);
process.stdout.write(`\n${JSON.stringify(result)}\n`);
process.exit(0);
