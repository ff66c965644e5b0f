/**
 * `npm run bench`: webgguf side by side with llama.cpp (node-llama-cpp, CPU and optionally Vulkan) and wllama on the
 * same synthetic GGUF, thread counts and token ids, interleaved over rounds, plus a WASM bandwidth probe for the decode
 * roofline. Each case runs in its own process; results go to .cache/bench/ as JSON, Markdown and SVG. Never gating.
 */

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import type { KvType } from '../../src/backend/kv-type.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import { makeSyntheticModel, REPO_ROOT } from '../../scripts/synthetic-model.js';
import { probeBandwidth } from './bandwidth-probe.js';
import { computeRatios, summarize, toMarkdown, toSvg } from './bench-report.js';
import { round, type BandwidthResult, type BenchReport, type RunResult, type Workload } from './bench-types.js';
import { parseBenchArgs, USAGE, type BenchArgs } from './bench-args.js';
import type { ChoicesResult } from './choices-measure.js';
import type { StructuredResult } from './structured-run.js';
import { cachedLoadMarkdown, runCachedLoad, type CachedLoadResult } from './cached-load.js';
import type { CachedLoadRun } from './cached-load-run.js';
import { type PromptCacheResult, promptCacheMarkdown, runPromptCache } from './prompt-cache.js';
import type { PromptCacheRun } from './prompt-cache-run.js';

/** One case of a round: which runner, with what spec. */
interface Case {
  readonly label: string;
  readonly argv: string[];
  readonly env?: Record<string, string>;
}

const NODE_FLAGS = ['--experimental-wasm-relaxed-simd'];

/** Runs one case in a child process; resolves with its RunResult (last JSON line of stdout). */
export function runCase(c: Case, timeoutMs: number): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...NODE_FLAGS, ...c.argv], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...c.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code, sig) => {
      clearTimeout(timer);
      const last = out.trim().split('\n').pop() ?? '';
      if (code === 0 && last.startsWith('{')) {
        resolve(JSON.parse(last) as RunResult);
        return;
      }
      const why = sig ? `killed by ${sig} (timeout ${timeoutMs / 1000} s?)` : `exit ${code}`;
      const tail = (err || out)
        .trim()
        .split('\n')
        .filter((l) => !/^\s+at /.test(l))
        .slice(-3)
        .join(' | ');
      reject(new Error(`${c.label}: ${why}: ${tail.slice(0, 400)}`));
    });
  });
}

/** Runs a script in a child process and returns the JSON object of its last stdout line. */
function runJsonLine(argv: string[], timeoutMs: number): Promise<Record<string, unknown>> {
  return runCase({ label: argv[1] ?? 'case', argv }, timeoutMs) as unknown as Promise<Record<string, unknown>>;
}

/** The cases of one round, in order (reversed on odd rounds so drift in machine load cancels out). */
function casesFor(a: BenchArgs, modelPath: string, workload: Workload): Case[] {
  const ours = (backend: string, threads: number, kvType?: KvType): Case => ({
    label: `webgguf ${backend} ×${threads}${kvType ? ` KV ${kvType}` : ''}`,
    argv: [
      'scripts/run-ts.mjs',
      'test/bench/run-ours.ts',
      JSON.stringify({
        modelPath,
        backend,
        threads,
        workload,
        ...(kvType ? { kvType } : {}),
        profileSteps: a.profileSteps,
        profilePrefill: a.profilePrefill,
        ...(a.gpuTimestamps ? {} : { noGpuTimestamps: true }),
        ...(a.kernels === 'auto' ? {} : { kernels: a.kernels }),
      }),
    ],
  });
  const llama = (threads: number, gpu?: 'vulkan' | 'cuda'): Case => ({
    label: `llama.cpp ${gpu ?? 'cpu'} ×${threads}`,
    argv: [
      'scripts/bench/llama-cpp-run.mjs',
      JSON.stringify({ modelPath, threads, workload, ...(gpu ? { gpu } : {}) }),
    ],
    ...(gpu === 'vulkan' ? { env: { GGML_VK_VISIBLE_DEVICES: process.env['GGML_VK_VISIBLE_DEVICES'] ?? '0' } } : {}),
  });
  const out: Case[] = [];
  const kvTypes = a.kvTypes.length ? a.kvTypes : [undefined];
  for (const t of a.threads) {
    for (const kv of kvTypes) if (a.backends.includes('wasm')) out.push(ours('wasm', t, kv));
    for (const kv of kvTypes) if (a.backends.includes('cpu')) out.push(ours('cpu', t, kv));
    if (a.peers.includes('llama.cpp')) out.push(llama(t));
  }
  for (const kv of kvTypes) if (a.backends.includes('webgpu')) out.push(ours('webgpu', 1, kv));
  if (a.peers.includes('vulkan')) out.push(llama(a.threads[a.threads.length - 1] ?? 1, 'vulkan'));
  if (a.peers.includes('cuda')) out.push(llama(a.threads[a.threads.length - 1] ?? 1, 'cuda'));
  return out;
}

/** Bytes a decode step streams: every tensor, minus token_embd when a separate output matrix exists (one row only). */
function bytesPerToken(tensors: readonly { name: string; byteLength: number }[]): number {
  const hasOutput = tensors.some((t) => t.name === 'output.weight');
  return tensors.reduce((s, t) => s + (hasOutput && t.name === 'token_embd.weight' ? 0 : t.byteLength), 0);
}

/** Entry of `npm run bench -- [options]`; returns 0 unless the arguments are bad. */
export async function main(args: string[]): Promise<number> {
  v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
  if (args[0] === 'embeddings') return (await import('./embedding-bench.js')).runEmbeddingBench(args.slice(1));
  if (args[0] === 'vision') return (await import('./vision-bench.js')).runVisionBench(args.slice(1));
  let a: BenchArgs;
  try {
    a = parseBenchArgs(args);
  } catch (e) {
    console.error(`${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (a.help) {
    console.log(USAGE);
    return 0;
  }
  if (a.render) {
    const rep = JSON.parse(readFileSync(a.render, 'utf8')) as BenchReport;
    const summary = summarize(rep.runs, rep.model.bytesPerToken, rep.bandwidth, rep.gpuBandwidthGbPerS ?? null);
    const full: BenchReport = { ...rep, summary, ratios: computeRatios(summary) };
    const stem = a.render.replace(/\.json$/, '');
    writeFileSync(`${stem}.md`, reportMarkdown(full));
    writeFileSync(`${stem}.svg`, toSvg(full));
    console.log(reportMarkdown(full));
    return 0;
  }
  const report = await runBench(a, (line) => console.log(line));
  console.log(`\n${reportMarkdown(report)}`);
  return 0;
}

/** Runs the whole benchmark described by `a`; writes the JSON/MD/SVG files and returns the report. */
export async function runBench(a: BenchArgs, log: (line: string) => void): Promise<BenchReport> {
  const startedAt = new Date().toISOString().slice(0, 19);
  const modelPath = a.model ?? (await makeSyntheticModel({ shape: a.shape, quant: a.quant }));
  const src = await NodeFileSource.open(modelPath);
  const gguf = await parseGguf(src);
  await src.close();
  const embd = gguf.tensors.find((t) => t.name === 'token_embd.weight');
  const vocab = embd?.shape[1] ?? 32000;
  const hi = Math.min(vocab, 30000);
  const workload: Workload = {
    promptLengths: a.prompts,
    decodeTokens: a.decode,
    seed: a.seed,
    tokenRange: [Math.min(100, hi - 1), hi],
  };
  const bpt = bytesPerToken(gguf.tensors);
  log(
    `model ${modelPath} (${(src.size / 2 ** 20).toFixed(0)} MiB, ${(bpt / 2 ** 20).toFixed(0)} MiB/token); load avg ${os.loadavg()[0].toFixed(1)}`,
  );

  const errors: string[] = [];
  let bandwidth: BandwidthResult | null = null;
  if (a.bandwidth) {
    bandwidth = await probeBandwidth({ threads: a.threads, bytes: a.bandwidthBytes });
    log(`bandwidth: ${JSON.stringify(bandwidth.gbPerS)} GB/s (load ${bandwidth.loadAvg})`);
  }
  if (a.peers.length > 0) {
    if (!existsSync(path.join(REPO_ROOT, 'scripts/oracle/node_modules/node-llama-cpp'))) {
      errors.push('llama.cpp: node-llama-cpp is not installed (cd scripts/oracle && npm install)');
      a = { ...a, peers: [] };
    }
  }
  const runs: RunResult[] = [];
  const failed = new Set<string>();
  for (let round_ = 0; round_ < a.rounds; round_++) {
    const cases = casesFor(a, modelPath, workload);
    if (round_ % 2 === 1) cases.reverse();
    for (const c of cases) {
      if (failed.has(c.label)) continue;
      try {
        const r = await runCase(c, a.caseTimeoutS * 1000);
        runs.push(r);
        log(
          `round ${round_ + 1} ${c.label}: prefill ${JSON.stringify(r.prefillTokPerS)} tok/s, decode ${r.decodeTokPerS} tok/s, load ${r.loadAvg.join('→')}`,
        );
      } catch (e) {
        failed.add(c.label);
        errors.push((e as Error).message);
        log(`round ${round_ + 1} ${(e as Error).message}`);
      }
    }
  }
  if (a.browser) {
    const { runBrowserBench } = await import('./browser-bench.js');
    try {
      runs.push(
        ...(await runBrowserBench({
          modelPath,
          threads: a.threads,
          workload,
          rounds: a.rounds,
          log,
          webgpu: a.browserWebgpu,
          caseTimeoutMs: a.caseTimeoutS * 1000,
          profileSteps: a.profileSteps,
          profilePrefill: a.profilePrefill,
          gpuTimestamps: a.gpuTimestamps,
        })),
      );
    } catch (e) {
      errors.push(`browser: ${(e as Error).message}`);
    }
  }
  // Constrained decoding (XGrammar): decode tok/s with a 20-property JSON schema ÷ unconstrained, and compile times.
  const structured: StructuredResult[] = [];
  for (const backend of a.backends.filter((b) => b === 'wasm' || b === 'webgpu')) {
    try {
      const r = await runJsonLine(
        [
          'scripts/run-ts.mjs',
          'test/bench/structured-run.ts',
          JSON.stringify({ modelPath, backend, threads: a.threads[0] ?? 1, decode: Math.min(a.decode, 64) }),
        ],
        a.caseTimeoutS * 1000,
      );
      structured.push(r as unknown as StructuredResult);
      log(`structured ${backend}: constrained ${JSON.stringify(r)}`);
    } catch (e) {
      errors.push(`structured ${backend}: ${(e as Error).message}`);
    }
  }
  // Batched choices (issue 16): n = 4 aggregate decode tok/s ÷ n = 1, WASM at 1 thread (target ≥ 2.5×).
  const choices: ChoicesResult[] = [];
  if (a.backends.includes('wasm')) {
    try {
      const r = await runJsonLine(
        [
          'scripts/run-ts.mjs',
          'test/bench/choices-run.ts',
          JSON.stringify({ modelPath, backend: 'wasm', threads: 1, decode: Math.min(a.decode, 32), n: 4 }),
        ],
        a.caseTimeoutS * 1000,
      );
      choices.push(r as unknown as ChoicesResult);
      log(`choices wasm: ${JSON.stringify(r)}`);
    } catch (e) {
      errors.push(`choices wasm: ${(e as Error).message}`);
    }
    // The same in Chromium: the product's host, and its kernel build can differ from Node's (relaxed-dot).
    if (a.browser || a.browserChoices) {
      const { runBrowserChoices } = await import('./browser-choices.js');
      try {
        const r = await runBrowserChoices(
          modelPath,
          { threads: 1, decode: Math.min(a.decode, 32), n: 4 },
          a.caseTimeoutS * 1000,
        );
        choices.push(r);
        log(`choices chromium wasm: ${JSON.stringify(r)}`);
      } catch (e) {
        errors.push(`choices chromium wasm: ${(e as Error).message}`);
      }
    }
  }
  // Persisted prompt cache: TTFT of a 1,000-token system prompt after a reload (new process, restored KV) ÷ cold.
  let promptCache: PromptCacheResult | null = null;
  if (a.promptCache && a.backends.includes('wasm')) {
    try {
      promptCache = await runPromptCache({
        modelPath,
        threads: a.threads[0] ?? 1,
        rounds: a.rounds,
        run: async (spec) =>
          (await runJsonLine(
            ['scripts/run-ts.mjs', 'test/bench/prompt-cache-run.ts', JSON.stringify(spec)],
            a.caseTimeoutS * 1000,
          )) as unknown as PromptCacheRun,
        log,
      });
    } catch (e) {
      errors.push(`prompt cache: ${(e as Error).message}`);
    }
  }
  // Cached load: reading the file alone vs createEngine until ready, same rounds, separate processes.
  let cachedLoad: CachedLoadResult | null = null;
  const loadBackends = a.backends.filter((b): b is 'wasm' | 'webgpu' => b === 'wasm' || b === 'webgpu');
  if (a.cachedLoad && loadBackends.length > 0) {
    try {
      cachedLoad = await runCachedLoad({
        modelPath,
        backends: loadBackends,
        threads: a.threads[0] ?? 1,
        rounds: a.rounds,
        run: async (spec) =>
          (await runJsonLine(
            ['scripts/run-ts.mjs', 'test/bench/cached-load-run.ts', JSON.stringify(spec)],
            a.caseTimeoutS * 1000,
          )) as unknown as CachedLoadRun,
        log,
      });
    } catch (e) {
      errors.push(`cached load: ${(e as Error).message}`);
    }
  }
  let cachedLoadBrowser: CachedLoadResult | null = null;
  if (a.cachedLoad && (a.browser || a.browserCachedLoad)) {
    const { runBrowserCachedLoad } = await import('./browser-cached-load.js');
    try {
      cachedLoadBrowser = await runBrowserCachedLoad({
        modelPath,
        backends: a.browserWebgpu ? ['wasm', 'webgpu'] : ['wasm'],
        threads: a.threads[0] ?? 1,
        rounds: a.rounds,
        log,
        caseTimeoutMs: a.caseTimeoutS * 1000,
      });
    } catch (e) {
      errors.push(`cached load (chromium): ${(e as Error).message}`);
    }
  }
  const summary = summarize(runs, bpt, bandwidth, a.gpuBw);
  const report: BenchReport = {
    version: 1,
    startedAt,
    command: `npm run bench -- ${args0(a)}`.trim(),
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? 'unknown',
      node: process.versions.node,
      totalMemGiB: round(os.totalmem() / 2 ** 30, 1),
    },
    model: {
      path: modelPath,
      shape: a.model ? path.basename(a.model) : a.shape,
      quant: a.model ? '' : a.quant,
      bytes: src.size,
      bytesPerToken: bpt,
    },
    workload,
    bandwidth,
    gpuBandwidthGbPerS: a.gpuBw,
    runs,
    summary,
    ratios: computeRatios(summary),
    errors,
    structured,
    choices,
    cachedLoad,
    cachedLoadBrowser,
    promptCache,
  };
  mkdirSync(a.outDir, { recursive: true });
  const stem = path.join(a.outDir, `bench-${startedAt.replace(/[:T]/g, '-')}`);
  writeFileSync(`${stem}.json`, `${JSON.stringify(report, null, 1)}\n`);
  writeFileSync(`${stem}.md`, reportMarkdown(report));
  writeFileSync(`${stem}.svg`, toSvg(report));
  log(`wrote ${stem}.{json,md,svg}`);
  return report;
}

/** The report's tables, then the cached-load section when it ran. */
function reportMarkdown(r: BenchReport): string {
  let md = toMarkdown(r);
  if (r.cachedLoad) md += `\n${cachedLoadMarkdown(r.cachedLoad)}`;
  if (r.cachedLoadBrowser) md += `\n${cachedLoadMarkdown(r.cachedLoadBrowser, 'Chromium, IndexedDB')}`;
  if (r.promptCache) md += `\n${promptCacheMarkdown(r.promptCache)}`;
  return md;
}

/** The options as typed, for the report's `command`. */
function args0(a: BenchArgs): string {
  return a.raw.join(' ');
}
