/**
 * The model store in real Chromium: a page downloads stories260K.gguf through the real range reader into IndexedDB
 * (small chunks, so there are several), reloads, and reads it back with zero network requests for the model; an
 * interrupted download resumes after a reload fetching only the chunks not stored; dropped and stalled connections
 * are retried (a stalled one resuming from the last byte received); a server without validators is read through one
 * response; a byte changed in IndexedDB is caught by the checksums on open and only its chunk is fetched again.
 * The page's bundle is built from test/e2e/pages/io-entry.ts with Vite; the fault server serves it and the fixtures.
 */

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type Page, expect, test } from '@playwright/test';
import { type FaultServer, startFaultServer } from '../helpers/fault-server.js';
import { SHARED_DIR, sharedPath } from '../helpers/shared-path.js';
import { REPO_ROOT, buildPageBundle } from './support/page-setup.js';

const BUNDLE_DIR = resolve(REPO_ROOT, 'test-results/e2e-bundles/io');
const MODEL_PATH = '/models/stories260K.gguf';
const FIXTURE = new Uint8Array(readFileSync(sharedPath('models', 'stories260K.gguf')));
const FIXTURE_SHA = createHash('sha256').update(FIXTURE).digest('hex');
const CHUNK = 128 * 1024;
const N_CHUNKS = Math.ceil(FIXTURE.byteLength / CHUNK);

let server: FaultServer;

test.beforeAll(async () => {
  await buildPageBundle('test/e2e/pages/io-entry.ts', BUNDLE_DIR);
  server = await startFaultServer({
    '/': SHARED_DIR,
    '/app/': BUNDLE_DIR,
    '/pages/': resolve(REPO_ROOT, 'test/e2e/pages'),
  });
});

test.afterAll(async () => {
  await server?.close();
});

test.beforeEach(() => {
  server.setFault(MODEL_PATH, undefined);
  server.clearLog();
});

/** Opens the test page and waits for its helpers. */
async function openPage(page: Page): Promise<void> {
  await page.goto(server.url('/pages/io.html'));
  await expect(page.locator('#status')).toHaveText('ready');
}

/** Counts the page's requests for the model from now on. */
function countModelRequests(page: Page): { count: number } {
  const counter = { count: 0 };
  page.on('request', (req) => {
    if (new URL(req.url()).pathname === MODEL_PATH) counter.count++;
  });
  return counter;
}

const modelUrl = (): string => server.url(MODEL_PATH);

test('downloads into IndexedDB, then reloads and reads it back with zero network requests', async ({ page }) => {
  await openPage(page);
  const first = await page.evaluate(([url, chunk]) => window.webggufIo.download(url, chunk), [
    modelUrl(),
    CHUNK,
  ] as const);
  expect(first).toMatchObject({ ok: true, message: null });
  expect(first.chunkPresent).toHaveLength(N_CHUNKS);
  expect(server.requestsFor(MODEL_PATH)).toHaveLength(1 + N_CHUNKS); // probe + one request per chunk
  expect(
    server
      .requestsFor(MODEL_PATH)
      .slice(1)
      .every((r) => r.status === 206 && r.ifRange !== null),
  ).toBe(true);

  await page.reload();
  await expect(page.locator('#status')).toHaveText('ready');
  server.clearLog();
  const seen = countModelRequests(page);
  const back = await page.evaluate((url) => window.webggufIo.readBackSha(url), modelUrl());
  expect(back).toEqual({ sha256: FIXTURE_SHA, kind: 'idb' });
  expect(server.requestsFor(MODEL_PATH)).toHaveLength(0);
  expect(seen.count).toBe(0);
});

test('an interrupted download resumes after a reload without refetching stored chunks', async ({ page }) => {
  await openPage(page);
  const interrupted = await page.evaluate(([url, chunk, stopAt]) => window.webggufIo.download(url, chunk, stopAt), [
    modelUrl(),
    CHUNK,
    4 * CHUNK,
  ] as const);
  expect(interrupted).toMatchObject({ ok: false, code: 'aborted' });
  const stored = interrupted.chunkPresent.flatMap((p, i) => (p ? [i] : []));
  expect(stored.length).toBeGreaterThan(0);
  expect(stored.length).toBeLessThan(N_CHUNKS);

  await page.reload();
  await expect(page.locator('#status')).toHaveText('ready');
  const afterReload = await page.evaluate(() => window.webggufIo.list());
  expect(afterReload).toEqual([{ url: modelUrl(), complete: false, chunkPresent: interrupted.chunkPresent }]);

  await server.idle(); // requests the first page sent just before aborting must not count as the resume's
  server.clearLog();
  const resumed = await page.evaluate(([url, chunk]) => window.webggufIo.download(url, chunk), [
    modelUrl(),
    CHUNK,
  ] as const);
  expect(resumed).toMatchObject({ ok: true, message: null });
  const [probe, ...rest] = server.requestsFor(MODEL_PATH);
  expect(probe.range).toBe('bytes=0-0');
  const fetched = rest.map((r) => Number(/bytes=(\d+)-/.exec(r.range ?? '')?.[1]) / CHUNK).sort((a, b) => a - b);
  const missing = interrupted.chunkPresent.flatMap((p, i) => (p ? [] : [i]));
  expect(fetched).toEqual(missing);

  await page.reload();
  await expect(page.locator('#status')).toHaveText('ready');
  server.clearLog();
  expect(await page.evaluate((url) => window.webggufIo.readBackSha(url), modelUrl())).toEqual({
    sha256: FIXTURE_SHA,
    kind: 'idb',
  });
  expect(server.requestsFor(MODEL_PATH)).toHaveLength(0);
});

test('connections dropped mid-chunk are retried and the stored file is intact', async ({ page }) => {
  await openPage(page);
  server.setFault(MODEL_PATH, { skip: 1, times: 4, dropAfterBytes: 50_000 });
  const result = await page.evaluate(([url, chunk]) => window.webggufIo.download(url, chunk), [
    modelUrl(),
    CHUNK,
  ] as const);
  expect(result).toMatchObject({ ok: true, message: null });
  const ranged = server.requestsFor(MODEL_PATH).slice(1);
  expect(ranged.length).toBe(N_CHUNKS + 4);
  // Chromium may discard bytes that were in flight when the connection broke, so the page can re-request some of
  // them (the stall test below shows exact resumption); never more than the dropped responses carried.
  expect(ranged.reduce((n, r) => n + r.bytesSent, 0)).toBeLessThanOrEqual(FIXTURE.byteLength + 4 * 50_000);
  expect(await page.evaluate((url) => window.webggufIo.readBackSha(url), modelUrl())).toEqual({
    sha256: FIXTURE_SHA,
    kind: 'idb',
  });
});

test('a stalled connection is cancelled and resumed from the last byte received', async ({ page }) => {
  await openPage(page);
  server.setFault(MODEL_PATH, { skip: 1, times: 3, stallAfterBytes: 30_000 });
  const result = await page.evaluate(
    ([url, chunk, stallMs]) => window.webggufIo.download(url, chunk, undefined, stallMs),
    [modelUrl(), CHUNK, 500] as const,
  );
  expect(result).toMatchObject({ ok: true, message: null });
  const ranged = server.requestsFor(MODEL_PATH).slice(1);
  expect(ranged.length).toBe(N_CHUNKS + 3);
  expect(ranged.reduce((n, r) => n + r.bytesSent, 0)).toBe(FIXTURE.byteLength); // no byte fetched twice
  expect(await page.evaluate((url) => window.webggufIo.readBackSha(url), modelUrl())).toEqual({
    sha256: FIXTURE_SHA,
    kind: 'idb',
  });
});

test('without validators the file comes through one response and is stored intact', async ({ page }) => {
  await openPage(page);
  server.setFault(MODEL_PATH, { noValidators: true });
  const result = await page.evaluate(([url, chunk]) => window.webggufIo.download(url, chunk), [
    modelUrl(),
    CHUNK,
  ] as const);
  expect(result).toMatchObject({ ok: true, message: null });
  expect(server.requestsFor(MODEL_PATH).map((r) => r.range)).toEqual(['bytes=0-0', 'bytes=0-']);
  expect(await page.evaluate((url) => window.webggufIo.readBackSha(url), modelUrl())).toEqual({
    sha256: FIXTURE_SHA,
    kind: 'idb',
  });
});

test('a byte changed in IndexedDB is refused on open; opening the model again refetches only that chunk', async ({
  page,
}) => {
  await openPage(page);
  expect(
    await page.evaluate(([url, chunk]) => window.webggufIo.download(url, chunk), [modelUrl(), CHUNK] as const),
  ).toMatchObject({ ok: true });
  await page.evaluate((url) => window.webggufIo.tamper(url, 3, 1000), modelUrl());
  expect(await page.evaluate((url) => window.webggufIo.openError(url), modelUrl())).toEqual({
    code: 'network',
    reason: 'checksum-mismatch',
  });
  server.clearLog();
  expect(await page.evaluate((url) => window.webggufIo.readBackSha(url), modelUrl())).toEqual({
    sha256: FIXTURE_SHA,
    kind: 'idb',
  });
  expect(server.requestsFor(MODEL_PATH).map((r) => r.range)).toEqual([
    'bytes=0-0',
    `bytes=${3 * CHUNK}-${4 * CHUNK - 1}`,
  ]);
});
