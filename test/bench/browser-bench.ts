/**
 * Browser side of the benchmark: bundles browser/page-entry.ts with Vite, serves it, the WASM kernels, wllama (from
 * scripts/bench/node_modules) and the model on 127.0.0.1 with COOP/COEP (so threads work), and drives the system
 * Chromium headless through Playwright: our WASM (and WebGPU on SwiftShader, opt-in) vs wllama, same file and threads.
 */

import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Page } from '@playwright/test';
import { REPO_ROOT } from '../../scripts/synthetic-model.js';
import { buildPageBundle } from '../e2e/support/page-setup.js';
import { startStaticServer } from '../e2e/support/static-server.js';
import { round, type RunResult, type Workload } from './bench-types.js';
import type { PageSpec } from './browser/page-entry.js';

/**
 * Chromium flags of ../shared/docs/test-environment.md §1 (WebGPU on SwiftShader; no background traffic), plus WebGPU developer
 * features: the adapter then reports its description, and timestamp queries are not quantized (100 µs otherwise).
 * Extra flags can be added with WEBGGUF_BENCH_CHROMIUM_FLAGS (space-separated).
 */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--enable-unsafe-webgpu',
  '--use-webgpu-adapter=swiftshader',
  '--enable-webgpu-developer-features',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

/** Options of `runBrowserBench`. */
export interface BrowserBenchOptions {
  readonly modelPath: string;
  readonly threads: readonly number[];
  readonly workload: Workload;
  readonly rounds: number;
  readonly log: (line: string) => void;
  /** Also our WebGPU path (SwiftShader here: slow). */
  readonly webgpu?: boolean;
  /** Skip wllama (e.g. not installed). */
  readonly noWllama?: boolean;
  /** Per-case limit, ms (default 15 min). */
  readonly caseTimeoutMs?: number;
  /** Decode steps timed op by op after the plain decode (default 8; 0 skips). */
  readonly profileSteps?: number;
  /** Re-run the first prompt op by op for a prefill breakdown (default true). */
  readonly profilePrefill?: boolean;
  /** WebGPU: GPU timestamps for the breakdown where offered (default true). */
  readonly gpuTimestamps?: boolean;
}

const WLLAMA_DIR = path.join(REPO_ROOT, 'scripts', 'bench', 'node_modules', '@wllama', 'wllama', 'esm');
const BUNDLE_DIR = path.join(REPO_ROOT, '.cache', 'bench', 'browser');

async function buildPage(): Promise<void> {
  mkdirSync(BUNDLE_DIR, { recursive: true });
  await buildPageBundle('test/bench/browser/page-entry.ts', BUNDLE_DIR);
  writeFileSync(
    path.join(BUNDLE_DIR, 'index.html'),
    '<!doctype html><meta charset="utf-8"><title>loading</title><script type="module" src="./page-entry.js"></script>\n',
  );
}

/** Builds the page and serves it, the kernels, wllama and the model's folder on 127.0.0.1. */
export async function startBenchServer(modelPath: string) {
  await buildPage();
  const server = await startStaticServer({
    '/app/': BUNDLE_DIR,
    '/kernels/': path.join(REPO_ROOT, 'wasm', 'build'),
    '/wllama/': WLLAMA_DIR,
    '/model/': path.dirname(modelPath),
  });
  return {
    server,
    appUrl: server.url('/app/index.html'),
    modelUrl: server.url(`/model/${encodeURIComponent(path.basename(modelPath))}`),
  };
}

/** Launches the system Chromium headless with the bench flags. */
export function launchBenchChromium() {
  const extra = (process.env['WEBGGUF_BENCH_CHROMIUM_FLAGS'] ?? '').split(/\s+/).filter((f) => f);
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: [...CHROMIUM_ARGS, ...extra], headless: true });
}

/** Opens the bench page in `page` and waits until its script is ready. */
export async function gotoBenchPage(page: Page, appUrl: string, caseTimeoutMs = 900_000): Promise<void> {
  page.setDefaultTimeout(caseTimeoutMs);
  await page.goto(appUrl);
  await page.waitForFunction(() => document.title === 'webgguf bench ready', undefined, { timeout: 120_000 });
}

/** Builds and serves the page, launches Chromium on it and waits until the page is ready. */
async function openBenchPage(modelPath: string, caseTimeoutMs = 900_000) {
  const { server, appUrl } = await startBenchServer(modelPath);
  const browser = await launchBenchChromium();
  try {
    const page = await browser.newPage();
    await gotoBenchPage(page, appUrl, caseTimeoutMs);
    return { browser, page, server };
  } catch (e) {
    await browser.close();
    await server.close();
    throw e;
  }
}

/** Runs the browser cases, interleaved over rounds; a failing case is reported once and skipped after. */
export async function runBrowserBench(o: BrowserBenchOptions): Promise<RunResult[]> {
  const haveWllama = !o.noWllama && existsSync(path.join(WLLAMA_DIR, 'index.js'));
  if (!o.noWllama && !haveWllama) o.log('browser: wllama not installed (cd scripts/bench && npm install); skipping it');
  const { browser, page, server } = await openBenchPage(o.modelPath, o.caseTimeoutMs);
  const results: RunResult[] = [];
  try {
    const isolated = await page.evaluate(() => crossOriginIsolated);
    const adapter = await page.evaluate(async () => {
      const a = await navigator.gpu?.requestAdapter({ powerPreference: 'high-performance' });
      if (!a) return 'no WebGPU adapter';
      const i = a.info;
      const ts = a.features.has('timestamp-query') ? 'timestamp-query' : 'no timestamp-query';
      return `${[i.vendor, i.architecture, i.description].filter((x) => x).join(' | ')}; ${a.features.has('shader-f16') ? 'f16' : 'no f16'}; ${ts}`;
    });
    o.log(`browser: Chromium ${browser.version()}, crossOriginIsolated ${isolated}, WebGPU adapter: ${adapter}`);
    const failed = new Set<string>();
    for (let r = 0; r < o.rounds; r++) {
      const cases: [string, (s: PageSpec) => Promise<RunResult>][] = [];
      for (const t of o.threads) {
        cases.push([`chromium webgguf wasm ×${t}`, (s) => callPage(page, 'wasm', { ...s, threads: t })]);
        if (haveWllama) cases.push([`chromium wllama ×${t}`, (s) => callPage(page, 'wllama', { ...s, threads: t })]);
      }
      if (o.webgpu) cases.push(['chromium webgguf webgpu', (s) => callPage(page, 'webgpu', { ...s, threads: 1 })]);
      if (r % 2 === 1) cases.reverse();
      for (const [label, run] of cases) {
        if (failed.has(label)) continue;
        const spec: PageSpec = {
          modelUrl: server.url(`/model/${encodeURIComponent(path.basename(o.modelPath))}`),
          threads: 1,
          workload: o.workload,
          wasmBaseUrl: server.url('/kernels/'),
          wllamaUrl: server.url('/wllama/'),
          ...(o.profileSteps !== undefined ? { profileSteps: o.profileSteps } : {}),
          ...(o.profilePrefill !== undefined ? { profilePrefill: o.profilePrefill } : {}),
          ...(o.gpuTimestamps === false ? { noGpuTimestamps: true } : {}),
        };
        try {
          const l0 = os.loadavg()[0];
          const res = await run(spec);
          results.push({ ...res, host: 'chromium', loadAvg: [round(l0), round(os.loadavg()[0])] });
          o.log(
            `round ${r + 1} ${label}: prefill ${JSON.stringify(res.prefillTokPerS)} tok/s, decode ${res.decodeTokPerS} tok/s`,
          );
        } catch (e) {
          failed.add(label);
          o.log(`round ${r + 1} ${label}: failed: ${(e as Error).message.split('\n')[0]}`);
        }
      }
    }
  } finally {
    await browser.close();
    await server.close();
  }
  return results;
}

function callPage(page: Page, which: 'wasm' | 'webgpu' | 'wllama', spec: PageSpec): Promise<RunResult> {
  return page.evaluate(([w, s]) => (w === 'wllama' ? window.webggufBench.wllama(s) : window.webggufBench.ours(s, w)), [
    which,
    spec,
  ] as const);
}
