/**
 * `npm run bench` (with --browser-choices or --browser): batched choices (choices-measure.ts) on our WASM backend in
 * headless Chromium, the bench page of browser-bench.ts — where the kernel build can differ from Node's (the
 * relaxed-dot build runs where Chromium lowers the relaxed dot-add to AVX-VNNI, wasm/README.md). CPU time is the
 * renderer processes' (DevTools protocol `SystemInfo.getProcessInfo`), exposed to the page as a function.
 */

import path from 'node:path';
import { gotoBenchPage, launchBenchChromium, startBenchServer } from './browser-bench.js';
import type { ChoicesResult } from './choices-measure.js';
import type { ChoicesPageSpec } from './browser/page-choices.js';

/** One process as `SystemInfo.getProcessInfo` lists it. */
interface ProcessInfo {
  readonly type: string;
  /** Seconds of CPU since the process started. */
  readonly cpuTime: number;
}

/** Serves the page and the model, measures batched choices in Chromium, and closes everything. */
export async function runBrowserChoices(
  modelPath: string,
  spec: Omit<ChoicesPageSpec, 'modelUrl'>,
  caseTimeoutMs = 900_000,
): Promise<ChoicesResult> {
  const { server, appUrl } = await startBenchServer(modelPath);
  const browser = await launchBenchChromium();
  try {
    const cdp = await browser.newBrowserCDPSession();
    const page = await browser.newPage();
    // Every renderer's CPU (one page works; others idle): the sum's differences are the page's work.
    await page.exposeFunction('webggufRendererCpuMs', async () => {
      const r = (await cdp.send('SystemInfo.getProcessInfo')) as { processInfo: ProcessInfo[] };
      return r.processInfo.filter((p) => p.type === 'renderer').reduce((s, p) => s + p.cpuTime * 1000, 0);
    });
    await gotoBenchPage(page, appUrl, caseTimeoutMs);
    const s: ChoicesPageSpec = {
      ...spec,
      modelUrl: server.url(`/model/${encodeURIComponent(path.basename(modelPath))}`),
    };
    return await page.evaluate((x) => window.webggufBench.choices(x), s);
  } finally {
    await browser.close();
    await server.close();
  }
}

/** Entry for scripts/run-ts.mjs: `'{"modelPath":…,"threads":1,"decode":32,"n":4}'` → one JSON line. */
export async function main(args: string[]): Promise<number> {
  if (!args[0]) {
    console.error('usage: browser-choices.ts \'{"modelPath": …, "threads": 1, "decode": 32, "n": 4}\'');
    return 2;
  }
  const { modelPath, ...spec } = JSON.parse(args[0]) as Omit<ChoicesPageSpec, 'modelUrl'> & { modelPath: string };
  console.log(JSON.stringify(await runBrowserChoices(modelPath, spec)));
  return 0;
}
