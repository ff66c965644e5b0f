/**
 * Cached load through the model store's chunk worker in real Chromium (issue 20): stored chunks are read and
 * checked (the fast checksum of chunk-sum.ts at load, sha256 when asked) in a dedicated worker started from an inline script and handed back without a copy. A stored model
 * streams back byte for byte (one worker: Blob-stored chunks leave nothing in its heap), `createEngine` from the store
 * answers like llama.cpp, a changed byte fails the load with the integrity error and marks just its chunk for
 * refetch, and an abort mid-load ends it with `aborted`. The page is built from test/e2e/pages/idb-load-entry.ts.
 */

import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect, test } from '@playwright/test';
import { type FaultServer, startFaultServer } from '../helpers/fault-server.js';
import { SHARED_DIR, sharedPath } from '../helpers/shared-path.js';
import { REPO_ROOT, buildPageBundle, readStories260kReference } from './support/page-setup.js';

const BUNDLE_DIR = resolve(REPO_ROOT, 'test-results/e2e-bundles/idb-load');
const MODEL_PATH = '/models/stories260K.gguf';
const FIXTURE = readFileSync(sharedPath('models', 'stories260K.gguf'));
const CHUNK = 64 * 1024;
const N_CHUNKS = Math.ceil(FIXTURE.byteLength / CHUNK);

let server: FaultServer;

test.beforeAll(async () => {
  await buildPageBundle('test/e2e/pages/idb-load-entry.ts', BUNDLE_DIR);
  writeFileSync(
    resolve(BUNDLE_DIR, 'index.html'),
    '<!doctype html><meta charset="utf-8"><title>loading</title><script type="module" src="./idb-load-entry.js"></script>\n',
  );
  server = await startFaultServer({ '/': SHARED_DIR, '/app/': BUNDLE_DIR });
});

test.afterAll(async () => {
  await server?.close();
});

test('a stored model streams back through the chunk worker, loads and answers; damage and abort are caught', async ({
  page,
}) => {
  test.setTimeout(180_000);
  await page.goto(server.url('/app/index.html'));
  await page.waitForFunction(() => document.title === 'idb-load ready');
  const url = server.url(MODEL_PATH);
  expect(await page.evaluate(([u, c]) => window.webggufIdbLoad.store(u, c), [url, CHUNK] as const)).toBe(N_CHUNKS);

  const streamed = await page.evaluate((u) => window.webggufIdbLoad.stream(u), url);
  expect(streamed).toEqual({
    sha256: createHash('sha256').update(FIXTURE).digest('hex'),
    workers: 1, // chunks stored as Blobs leave nothing in the worker: one serves the whole read (4 ahead)
  });

  const ref = readStories260kReference();
  const loaded = await page.evaluate(([u, p, n]) => window.webggufIdbLoad.load(u, p, n), [
    url,
    ref.prompt,
    ref.greedy_kv_f32.n,
  ] as const);
  expect(loaded).toMatchObject({ ok: true });
  expect('text' in loaded && loaded.text.trim()).toBe(ref.greedy_kv_f32.text.trim());

  const aborted = await page.evaluate((u) => window.webggufIdbLoad.load(u, 'x', 1, 1), url);
  expect(aborted).toMatchObject({ code: 'aborted' });

  const damaged = N_CHUNKS - 2;
  await page.evaluate(([u, i]) => window.webggufIdbLoad.tamper(u, i, 1000), [url, damaged] as const);
  const failed = await page.evaluate((u) => window.webggufIdbLoad.load(u, 'x', 1), url);
  // Caught by the fast checksum recorded at download, computed by the chunk worker's embedded copy of chunkSum.
  expect(failed).toEqual({ code: 'network', reason: 'checksum-mismatch', chunk: damaged, check: 'checksum' });
  expect(await page.evaluate(([u, i]) => window.webggufIdbLoad.isStored(u, i), [url, damaged] as const)).toBe(false);
  expect(await page.evaluate(([u, i]) => window.webggufIdbLoad.isStored(u, i), [url, damaged - 1] as const)).toBe(true);
});
