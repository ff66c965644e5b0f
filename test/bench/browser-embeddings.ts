/**
 * `npm run bench -- embeddings --backends chromium-wasm`: the embeddings benchmark's inputs through our WASM backend
 * in headless Chromium (the bench page of browser-bench.ts), where the kernel build can differ from Node's — the
 * relaxed-dot build runs where Chromium lowers the relaxed dot-add to AVX-VNNI (wasm/README.md). Wall time only.
 */

import path from 'node:path';
import { gotoBenchPage, launchBenchChromium, startBenchServer } from './browser-bench.js';
import type { EmbeddingsRun } from './browser/page-embeddings.js';

/** Serves the page and the model, embeds `inputs` in Chromium, and closes everything. */
export async function runBrowserEmbeddings(
  modelPath: string,
  threads: number,
  inputs: readonly (readonly number[])[],
  contextLength: number,
): Promise<EmbeddingsRun> {
  const { server, appUrl } = await startBenchServer(modelPath);
  const browser = await launchBenchChromium();
  try {
    const page = await browser.newPage();
    await gotoBenchPage(page, appUrl);
    const spec = {
      modelUrl: server.url(`/model/${encodeURIComponent(path.basename(modelPath))}`),
      threads,
      inputs,
      contextLength,
    };
    return await page.evaluate((s) => window.webggufBench.embeddings(s), spec);
  } finally {
    await browser.close();
    await server.close();
  }
}
