/**
 * The cached-load section in headless Chromium, from IndexedDB (issue 20): the model is stored once through the model
 * store from the local server, then every measurement runs in a FRESH page (its own renderer process, nothing warm
 * but the browser's HTTP cache): `read` reads every stored chunk back through the store's API, `ready` runs
 * `createEngine` on the URL until it resolves (WEBGGUF_BENCH_IDB_READ=main: the read one chunk after another on the
 * page's thread instead, as before the chunk worker; =stream: through the load's own source, checked, into one buffer); test/bench/cached-load.ts interleaves the rounds and takes the ratios.
 * Memory and CPU come from the processes themselves (Chrome DevTools Protocol `SystemInfo.getProcessInfo` for the
 * ids and CPU time, /proc for the renderer's resident set): the renderer's peak RSS growth over its RSS before the
 * step (the page's workers are threads of it), and the CPU time of every Chromium process during the step (the
 * renderer, the browser process that serves IndexedDB, the GPU process).
 */

import { readFileSync, writeFileSync } from 'node:fs';
import type { BrowserContext, CDPSession } from '@playwright/test';
import { gotoBenchPage, launchBenchChromium, startBenchServer } from './browser-bench.js';
import { runCachedLoad, type CachedLoadResult } from './cached-load.js';
import { rssByKind, traceRssByKind } from './rss-mappings.js';
import type { CachedLoadRun } from './cached-load-run.js';

interface ProcessInfo {
  readonly type: string;
  readonly id: number;
  /** Seconds of CPU since the process started. */
  readonly cpuTime: number;
}

async function processes(cdp: CDPSession): Promise<ProcessInfo[]> {
  const r = (await cdp.send('SystemInfo.getProcessInfo')) as { processInfo: ProcessInfo[] };
  return r.processInfo;
}

/** `VmRSS` / `VmHWM` of a process, MiB (NaN where /proc cannot tell). */
function procMemMiB(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** Resets a process's peak RSS (`VmHWM`) to its current RSS (Linux `clear_refs` 5); where refused, NaN is reported. */
function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/**
 * Diagnostic (`WEBGGUF_BENCH_RSS_TRACE=1`): samples the renderers' resident set every 25 ms from now; the returned
 * function stops and reports `ms:MiB` pairs (growth over `before`, samples above 30 MiB) to place the peak in a load.
 */
function traceRss(pids: readonly number[], before: ReadonlyMap<number, number>): () => string {
  const t0 = Date.now();
  const samples: string[] = [];
  const timer = setInterval(() => {
    for (const pid of pids) {
      const growth = procMemMiB(pid, 'VmRSS') - (before.get(pid) ?? 0);
      if (growth > 30) samples.push(`${Date.now() - t0}:${Math.round(growth)}`);
    }
  }, 25);
  return () => {
    clearInterval(timer);
    return samples.join(' ');
  };
}

const cpuOf = (ps: readonly ProcessInfo[]) => ps.reduce((s, p) => s + p.cpuTime, 0);

/** One step in a fresh page of `context`; adds the processes' CPU time and the renderer's memory to the page's result. */
async function stepInFreshPage(
  context: BrowserContext,
  cdp: CDPSession,
  appUrl: string,
  caseTimeoutMs: number,
  args: readonly [string, 'read' | 'ready', 'wasm' | 'webgpu', number, 'worker' | 'main' | 'stream'],
): Promise<CachedLoadRun & { rendererCpuMs: number }> {
  const page = await context.newPage();
  try {
    await gotoBenchPage(page, appUrl, caseTimeoutMs);
    const profileDir = process.env['WEBGGUF_BENCH_CPU_PROFILE'];
    const session = profileDir && args[1] === 'ready' ? await context.newCDPSession(page) : null;
    if (session) {
      await session.send('Profiler.enable');
      await session.send('Profiler.setSamplingInterval', { interval: 500 });
      await session.send('Profiler.start');
    }
    // The page's renderer is the one that works during the step (a new page may take a spare process, so it is
    // not simply the newest one): every renderer's RSS is noted before, the busiest one's peak read after.
    const p0 = await processes(cdp);
    const rss0 = new Map(p0.filter((p) => p.type === 'renderer').map((p) => [p.id, procMemMiB(p.id, 'VmRSS')]));
    for (const pid of rss0.keys()) if (!resetPeakRss(pid)) rss0.set(pid, Number.NaN); // it may have run a step before
    const trace = process.env['WEBGGUF_BENCH_RSS_TRACE'] ? traceRss([...rss0.keys()], rss0) : null;
    const maps = process.env['WEBGGUF_BENCH_RSS_MAPS']
      ? [...rss0.keys()].map((pid) => [pid, traceRssByKind(pid, rssByKind(pid))] as const)
      : [];
    const r = await page.evaluate((a) => window.webggufBench.cachedLoad(...a), args);
    if (trace) console.log(`chromium idb ${args[1]} RSS trace (ms:MiB above before): ${trace()}`);
    for (const [pid, stop] of maps) {
      const line = stop(); // null: this renderer did not grow (not the page's)
      if (line !== null) console.log(`chromium idb ${args[1]} renderer ${pid} mappings, ${line}`);
    }
    const p1 = await processes(cdp);
    if (session && profileDir) {
      const { profile } = (await session.send('Profiler.stop')) as { profile: unknown };
      writeFileSync(`${profileDir}/ready-${Date.now()}.cpuprofile`, JSON.stringify(profile));
    }
    let renderer: ProcessInfo | null = null;
    let rendererCpuMs = Number.NaN;
    for (const p of p1) {
      const was = p0.find((q) => q.id === p.id);
      const ms = (p.cpuTime - (was?.cpuTime ?? 0)) * 1000;
      if (p.type === 'renderer' && rss0.has(p.id) && !(ms <= rendererCpuMs)) [renderer, rendererCpuMs] = [p, ms];
    }
    const before = renderer === null ? Number.NaN : (rss0.get(renderer.id) ?? Number.NaN);
    const peak = renderer === null ? Number.NaN : procMemMiB(renderer.id, 'VmHWM');
    return {
      ...r,
      cpuMs: (cpuOf(p1) - cpuOf(p0)) * 1000,
      rendererCpuMs,
      rssBeforeMiB: before,
      rssGrowthMiB: Math.max(0, peak - before),
    };
  } finally {
    await page.close();
  }
}

/** Runs the section: `rounds` rounds of read + ready per backend, each step in a fresh page. */
export async function runBrowserCachedLoad(o: {
  readonly modelPath: string;
  readonly backends: readonly ('wasm' | 'webgpu')[];
  readonly threads: number;
  readonly rounds: number;
  readonly log: (line: string) => void;
  readonly caseTimeoutMs?: number;
}): Promise<CachedLoadResult> {
  const timeout = o.caseTimeoutMs ?? 900_000;
  const { server, appUrl, modelUrl } = await startBenchServer(o.modelPath);
  const browser = await launchBenchChromium();
  try {
    const context = await browser.newContext();
    const cdp = await browser.newBrowserCDPSession();
    const setup = await context.newPage();
    await gotoBenchPage(setup, appUrl, timeout);
    const size = await setup.evaluate((u) => window.webggufBench.storeModel(u), modelUrl);
    await setup.close();
    o.log(`chromium idb: Chromium ${browser.version()}, model stored (${(size / 2 ** 20).toFixed(0)} MiB)`);
    return await runCachedLoad({
      modelPath: o.modelPath,
      backends: o.backends,
      threads: o.threads,
      rounds: o.rounds,
      log: (line) => o.log(`chromium idb ${line}`),
      run: async (spec) => {
        const env = process.env['WEBGGUF_BENCH_IDB_READ'];
        const via = env === 'main' || env === 'stream' ? env : 'worker';
        const r = await stepInFreshPage(context, cdp, appUrl, timeout, [
          modelUrl,
          spec.mode,
          spec.backend,
          o.threads,
          via,
        ]);
        const phases = 'phaseStartMs' in r ? ` phases ${JSON.stringify(r.phaseStartMs)}` : '';
        o.log(
          `chromium idb ${spec.mode} ${spec.backend}: ${Math.round(r.ms)} ms, CPU ${Math.round(r.cpuMs)} ms ` +
            `(renderer ${Math.round(r.rendererCpuMs)}), renderer RSS ${Math.round(r.rssBeforeMiB)} +${Math.round(r.rssGrowthMiB)} MiB${phases}`,
        );
        return r;
      },
    });
  } finally {
    await browser.close();
    await server.close();
  }
}
