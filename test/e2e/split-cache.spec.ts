/**
 * Issue #20 in real Chromium: a split model (cut at test time from stories260K by test/helpers/gguf-splitter.ts)
 * loads from its first part's URL into IndexedDB and answers like the unsplit model; after a page reload the
 * persisted prompt cache restores the system prompt's KV, so the same chat reuses it with the same output.
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from '@playwright/test';
import { build } from 'vite';
import { type FaultServer, startFaultServer } from '../helpers/fault-server.js';
import { splitGguf, splitNames } from '../helpers/gguf-splitter.js';
import { sharedPath } from '../helpers/shared-path.js';

const REPO_ROOT = resolve(fileURLToPath(new URL('../../', import.meta.url)));
const BUNDLE_DIR = resolve(REPO_ROOT, 'test-results/e2e-bundles/split-cache');
const SYSTEM =
  'Once upon a time there was a little girl named Lily who loved to play in the park with her big red ball and her dog.';

let server: FaultServer;
let dir: string;

test.beforeAll(async () => {
  await build({
    configFile: false,
    root: REPO_ROOT,
    logLevel: 'warn',
    build: {
      outDir: BUNDLE_DIR,
      emptyOutDir: true,
      target: 'es2022',
      minify: false,
      lib: {
        entry: resolve(REPO_ROOT, 'test/e2e/pages/split-cache-entry.ts'),
        formats: ['es'],
        fileName: () => 'split-cache-entry.js',
      },
      rollupOptions: { external: [/^node:/] },
    },
  });
  dir = mkdtempSync(join(tmpdir(), 'webgguf-e2e-split-'));
  const parts = await splitGguf(new Uint8Array(readFileSync(sharedPath('models', 'stories260K.gguf'))), 3);
  splitNames('stories', 3).forEach((name, i) => writeFileSync(join(dir, name), parts[i]));
  server = await startFaultServer({
    '/split/': dir,
    '/app/': BUNDLE_DIR,
    '/pages/': resolve(REPO_ROOT, 'test/e2e/pages'),
  });
});

test.afterAll(async () => {
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('a split model loads from its first part URL; after a reload the system prompt is restored from IndexedDB', async ({
  page,
}) => {
  const url = server.url('/split/' + splitNames('stories', 3)[0]);
  await page.goto(server.url('/pages/split-cache.html'));
  await expect(page.locator('#status')).toHaveText('ready');
  const first = await page.evaluate(([u, s]) => window.webggufSplitCache.run(u, s, 'Hi.'), [url, SYSTEM] as const);
  expect(first).toMatchObject({ cached: 0, parts: 3, caches: 1 });
  await page.reload();
  await expect(page.locator('#status')).toHaveText('ready');
  const warm = await page.evaluate(([u, s]) => window.webggufSplitCache.run(u, s, 'Hi.'), [url, SYSTEM] as const);
  expect(warm.cached).toBeGreaterThan(20);
  expect(warm.text).toBe(first.text); // the same chat as the cold first run, now from the restored prefix
  expect(warm.parts).toBe(3);
});
